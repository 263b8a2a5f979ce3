package connector_test

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy is a loopback TCP proxy that can freeze the connections it
// carries: they stay open but carry nothing more, as a half-open TCP
// connection does when a NAT forgets it or a laptop sleeps.
type proxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int32

	mu    sync.Mutex
	pairs []*pair // guarded by mu
	wg    sync.WaitGroup
}

// pair is one proxied connection.
type pair struct {
	client, server net.Conn
	frozen         atomic.Bool
}

// newProxy proxies a new loopback listener to target until the test ends.
func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(p.close)
	return p
}

// URL returns the proxy's base URL.
func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		pr := &pair{client: c, server: s}
		p.mu.Lock()
		p.pairs = append(p.pairs, pr)
		p.mu.Unlock()
		p.accepted.Add(1)
		p.wg.Add(2)
		go p.pipe(pr, c, s)
		go p.pipe(pr, s, c)
	}
}

// pipe copies src to dst until src fails; once the pair is frozen it
// drops what it reads and leaves dst open.
func (p *proxy) pipe(pr *pair, src, dst net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if pr.frozen.Load() {
			if err != nil {
				return
			}
			continue
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil && !errors.Is(werr, net.ErrClosed) {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

// freeze stops every connection open now from carrying anything.
func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		pr.frozen.Store(true)
	}
}

// close ends the proxy and every connection it carries.
func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, pr := range p.pairs {
		_ = pr.client.Close()
		_ = pr.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
