package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// listen serves h's API on a listener of its own, wrapped as serve wraps
// it, and returns its address.
func listen(t *testing.T, h *facetest.Harness, cfg httpapi.ListenerConfig) (string, *httpapi.Listener) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	facetest.Must(t, err)
	ln := httpapi.Listen(tcp, cfg)
	srv := &http.Server{Handler: h.API, ReadHeaderTimeout: 5 * time.Second, ConnContext: httpapi.ConnContext}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return tcp.Addr().String(), ln
}

// TestSlowBodyClientsAreCutOff sends the headers of requests that declare
// a body, and then nothing: to /healthz, to an unknown agent, to the owner
// API without a token, to an agent's address with a valid token, and to the
// owner API with a valid token. Every one is answered or cut off within
// the body timeout (a handler that did not read the body answers at once,
// with Connection: close), and /healthz keeps answering meanwhile.
func TestSlowBodyClientsAreCutOff(t *testing.T) {
	const bodyTimeout = 400 * time.Millisecond
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.BodyTimeout = bodyTimeout }))
	g := h.Agent("slow")
	peer := h.PeerToken(g, "bob")
	addr, _ := listen(t, h, httpapi.ListenerConfig{UnauthenticatedPerAddress: -1})

	heads := map[string]string{
		"healthz":      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
		"unknown":      "POST /a/nobody HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
		"owner-no-tok": "POST /agents HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
		"peer-valid":   "POST /a/slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + peer + "\r\nContent-Length: 1000\r\n\r\n",
		"owner-valid":  "POST /agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + h.OperatorToken + "\r\nContent-Length: 1000\r\n\r\n",
		"chunked":      "POST /a/slow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + peer + "\r\nTransfer-Encoding: chunked\r\n\r\n",
	}
	type result struct {
		name   string
		took   time.Duration
		status string
		close  bool
		err    error
	}
	const each = 10
	results := make(chan result, len(heads)*each)
	var wg sync.WaitGroup
	for name, head := range heads {
		for range each {
			wg.Go(func() {
				start := time.Now()
				c, err := net.Dial("tcp", addr)
				if err != nil {
					results <- result{name: name, err: err}
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // the test's own bound
				if _, err := io.WriteString(c, head); err != nil {
					results <- result{name: name, err: err}
					return
				}
				r := result{name: name}
				br := bufio.NewReader(c)
				if resp, err := http.ReadResponse(br, nil); err == nil {
					r.status, r.close = resp.Status, resp.Close
					_, _ = io.Copy(io.Discard, resp.Body)
				}
				// The server must close the connection, not keep waiting.
				_, err = br.ReadByte()
				r.took, r.err = time.Since(start), nil
				if err == nil {
					r.err = fmt.Errorf("the connection is still open and sent more")
				} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
					r.err = fmt.Errorf("the connection is still open after %s", r.took)
				}
				results <- r
			})
		}
	}

	// /healthz answers throughout.
	for range 5 {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/healthz while slow clients wait: %v %v", resp, err)
		}
		resp.Body.Close()
		time.Sleep(bodyTimeout / 4)
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
			continue
		}
		if r.took > bodyTimeout+2*time.Second {
			t.Errorf("%s: cut off after %s, want within the body timeout of %s", r.name, r.took, bodyTimeout)
		}
		// Those answered without their body say the connection ends.
		if r.status != "" && !r.close {
			t.Errorf("%s: answered %s without Connection: close", r.name, r.status)
		}
		if (r.name == "healthz" || r.name == "unknown" || r.name == "owner-no-tok") && r.status == "" {
			t.Errorf("%s: no answer before the close", r.name)
		}
	}
}

// TestBodyReadKeepsTheConnection: a request whose body was read whole is
// answered without Connection: close, and the next request goes on the same
// connection; a JSON body with something after its value is refused.
func TestBodyReadKeepsTheConnection(t *testing.T) {
	h := facetest.New(t)
	addr, _ := listen(t, h, httpapi.ListenerConfig{})
	c, err := net.Dial("tcp", addr)
	facetest.Must(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	send := func(body string) *http.Response {
		t.Helper()
		_, err := fmt.Fprintf(c, "POST /accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			h.OperatorToken, len(body), body)
		facetest.Must(t, err)
		resp, err := http.ReadResponse(br, nil)
		facetest.Must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp
	}
	if resp := send(`{"name":"kept-1"}` + "\n"); resp.StatusCode != 201 || resp.Close {
		t.Fatalf("first: %s, close %v", resp.Status, resp.Close)
	}
	if resp := send(`{"name":"kept-2"}`); resp.StatusCode != 201 || resp.Close {
		t.Fatalf("second, on the same connection: %s, close %v", resp.Status, resp.Close)
	}
	if resp := send(`{"name":"kept-3"} {"name":"sneaked"}`); resp.StatusCode != 400 {
		t.Fatalf("trailing JSON: %s", resp.Status)
	}
}

// TestUnauthenticatedConnectionsPerAddress: one address may hold so many
// connections on which no request presented a valid token; the next is
// answered 503 and closed. A connection that authenticates, or closes,
// makes room.
func TestUnauthenticatedConnectionsPerAddress(t *testing.T) {
	h := facetest.New(t)
	addr, ln := listen(t, h, httpapi.ListenerConfig{UnauthenticatedPerAddress: 3})
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		facetest.Must(t, err)
		defer c.Close()
		idle = append(idle, c)
	}
	refused := func() bool {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		facetest.Must(t, err)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		facetest.Must(t, err)
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}
	if !refused() {
		t.Fatal("a fourth unauthenticated connection was served")
	}
	if ln.Refused() != 1 {
		t.Fatalf("Refused() = %d, want 1", ln.Refused())
	}

	// One idle connection authenticates: there is room for one more.
	_, err := fmt.Fprintf(idle[0], "GET /agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", h.OperatorToken)
	facetest.Must(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(idle[0]), nil)
	facetest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /agents: %s", resp.Status)
	}
	if refused() {
		t.Fatal("refused although one connection authenticated")
	}
	if ln.Refused() != 1 {
		t.Fatalf("Refused() = %d", ln.Refused())
	}
}

// TestWatchBodiesCutsOffSlowBodies: a handler served beside the API (the
// console's pages) through WatchBodies gets the API's body timeout: a
// client that declares a body and sends none is cut off within it, while
// the handler waits to read it.
func TestWatchBodiesCutsOffSlowBodies(t *testing.T) {
	const bodyTimeout = 300 * time.Millisecond
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.BodyTimeout = bodyTimeout }))
	page := h.API.WatchBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "the body did not come", http.StatusRequestTimeout)
		}
	}))
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	facetest.Must(t, err)
	srv := &http.Server{Handler: page, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(tcp) }()
	t.Cleanup(func() { _ = srv.Close() })

	c, err := net.Dial("tcp", tcp.Addr().String())
	facetest.Must(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // the test's own bound
	start := time.Now()
	_, err = io.WriteString(c, "POST /dashboard/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
	facetest.Must(t, err)
	_, err = io.Copy(io.Discard, c) // until the server closes the connection
	if took := time.Since(start); err != nil || took > 5*time.Second {
		t.Fatalf("the connection ended after %s (%v), want within about %s", took, err, bodyTimeout)
	}
}
