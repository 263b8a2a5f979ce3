package dashboard_test

import (
	"bufio"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// BenchmarkThousandStreams opens 1,000 event streams of one signed-in
// owner and reports what the process holds for them as MiB (the server's
// goroutines, buffers and watches, and the client's connections, which
// count too); docs/performance.md holds it against its budget, 30 MiB.
// The streams are opened once, whatever b.N.
func BenchmarkThousandStreams(b *testing.B) {
	t := b
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	h.agent(acct, "helper", "Helper", "")
	c := h.client()
	c.signIn(token)
	u, _ := url.Parse(h.srv.URL)
	var cookie string
	for _, ck := range c.hc.Jar.Cookies(u) {
		cookie += ck.Name + "=" + ck.Value + "; "
	}
	before := heldBytes()
	const n = 1000
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, conn := range conns {
			_ = conn.Close()
		}
	})
	for range n {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		if _, err := conn.Write([]byte("GET /dashboard/events HTTP/1.1\r\nHost: " + u.Host + "\r\nCookie: " + cookie + "\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		status, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.Contains(status, "200") {
			t.Fatalf("stream: %q %v", status, err)
		}
	}
	held := float64(heldBytes() - before)
	for b.Loop() {
	}
	b.ReportMetric(held/(1<<20), "MiB")
	b.ReportMetric(held/n/1024, "KiB/stream")
}

// heldBytes is the live heap and the goroutine stacks, once garbage
// collections have freed what is free and shrunk the idle goroutines'
// stacks (each halves a stack that uses a quarter of it).
func heldBytes() uint64 {
	for range 3 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}
