package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/clientaddr"
)

// DefaultUnauthenticatedPerAddress is how many connections one client
// address may hold open before any request on them has presented a valid
// credential, unless ListenerConfig.UnauthenticatedPerAddress says
// otherwise.
const DefaultUnauthenticatedPerAddress = 256

// ListenerConfig tunes Listen. Zero values mean defaults.
type ListenerConfig struct {
	// UnauthenticatedPerAddress bounds the connections one client address
	// (IP) holds open while none of their requests has been authenticated;
	// a connection past it is answered 503 and closed at once. A negative
	// value means no bound (behind a reverse proxy every client has the
	// proxy's address).
	UnauthenticatedPerAddress int
	// Logger receives failures to accept, at WARN, at most one line a
	// second.
	Logger *slog.Logger
	// TLS says the listener's connections carry TLS (it sits under the
	// TLS listener): a connection past the bound is closed, since a plain
	// 503 would mean nothing to a client that speaks TLS.
	TLS bool
}

// Listener wraps the server's listener: it refuses a client address more
// unauthenticated connections than its bound, and reports the errors of
// Accept (a process out of file descriptors stops answering; net/http only
// retries, quietly) in the log and in Failures.
type Listener struct {
	net.Listener
	cfg ListenerConfig

	acceptErrors atomic.Int64 // Accept calls that failed, but for a closed listener
	refused      atomic.Int64 // connections refused by the per-address bound

	mu       sync.Mutex
	unauth   map[string]int // guarded by mu: open unauthenticated connections by address
	reported time.Time      // guarded by mu: when an accept error was last logged
}

// Listen wraps ln.
func Listen(ln net.Listener, cfg ListenerConfig) *Listener {
	if cfg.UnauthenticatedPerAddress == 0 {
		cfg.UnauthenticatedPerAddress = DefaultUnauthenticatedPerAddress
	}
	return &Listener{Listener: ln, cfg: cfg, unauth: make(map[string]int)}
}

// AcceptErrors returns how many Accept calls failed (but for a closed
// listener).
func (l *Listener) AcceptErrors() int64 { return l.acceptErrors.Load() }

// Refused returns how many connections the per-address bound refused.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				l.acceptFailed(err)
			}
			return nil, err
		}
		addr := clientaddr.Key(remoteIP(c))
		if l.admit(addr) {
			return &trackedConn{Conn: c, l: l, addr: addr}, nil
		}
		l.refused.Add(1)
		if l.cfg.TLS {
			_ = c.Close()
			continue
		}
		go refuse(c)
	}
}

// admit counts a new unauthenticated connection from addr, if it is within
// the bound.
func (l *Listener) admit(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if max := l.cfg.UnauthenticatedPerAddress; max > 0 && l.unauth[addr] >= max {
		return false
	}
	l.unauth[addr]++
	return true
}

// release stops counting an unauthenticated connection of addr.
func (l *Listener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unauth[addr]--; l.unauth[addr] <= 0 {
		delete(l.unauth, addr)
	}
}

// acceptFailed counts a failed Accept and logs it, at most once a second.
func (l *Listener) acceptFailed(err error) {
	n := l.acceptErrors.Add(1)
	now := time.Now()
	l.mu.Lock()
	report := now.Sub(l.reported) >= time.Second
	if report {
		l.reported = now
	}
	l.mu.Unlock()
	if report && l.cfg.Logger != nil {
		l.cfg.Logger.Warn("accept connection", "err", err, "failures", n)
	}
}

// refusal is the answer to a connection past the bound.
var refusal = func() []byte {
	const body = "too many connections from this address; retry\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// refuse answers a connection past the bound with 503 and closes it.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(refusal)
	_ = c.Close()
}

// remoteIP is the address a connection comes from, without its port.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// trackedConn is a connection counted as unauthenticated until a request
// on it presents a valid credential, or it closes.
type trackedConn struct {
	net.Conn
	l      *Listener
	addr   string
	counts sync.Once // stops counting it, once
}

// authenticated stops counting the connection: a request on it presented a
// valid credential.
func (c *trackedConn) authenticated() { c.counts.Do(func() { c.l.release(c.addr) }) }

// Close implements net.Conn.
func (c *trackedConn) Close() error {
	c.authenticated()
	return c.Conn.Close()
}

// SyscallConn implements syscall.Conn with the socket under the
// connection, so that a WebSocket's reader can wait for bytes before it
// takes a buffer to read them into (hub.pooledReader); it fails for a
// connection without one.
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// connKey is the context key of the connection a request came on.
type connKey struct{}

// ConnContext is the http.Server's ConnContext: it lets a request find the
// connection it came on, so that a valid credential stops the connection
// from counting against its address's bound. Over HTTPS the connection
// is the TLS one, over the listener's.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// MarkAuthenticated records that r presented a valid credential: its
// connection no longer counts against its address's bound of
// unauthenticated connections.
func MarkAuthenticated(r *http.Request) {
	if tc, ok := r.Context().Value(connKey{}).(*trackedConn); ok {
		tc.authenticated()
	}
}
