package front

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// Bounds of the requests to an upstream.
const (
	// DefaultMaxBody bounds an upstream's answer, and each event of an
	// event stream, whose whole the client does not bound (a 1.0
	// upstream's events are read by sseData; a 0.3 upstream's by the
	// SDK, which bounds their lines at 10 MB).
	DefaultMaxBody = 8 << 20
	// DefaultHeaderTimeout bounds the wait for an upstream's answer to
	// begin.
	DefaultHeaderTimeout = 90 * time.Second
	// maxPeerHeader bounds the peer's label in X-A2A-Peer.
	maxPeerHeader = 200
)

// ErrTooLarge is the error of an upstream answer past the body bound.
var ErrTooLarge = errors.New("the upstream's answer is too large")

// ErrRedirected is the error of an upstream that answered with a redirect,
// which is never followed: the credentials stay on the upstream's origin.
var ErrRedirected = errors.New("the upstream answered with a redirect, which is not followed")

// ClientOptions configure the transport to upstreams.
type ClientOptions struct {
	// Guard is the network guard's setting: private and loopback
	// upstreams are refused unless it is opened.
	Guard netguard.Options
	// RootCAs, if set, are the certificates upstreams' are checked
	// against (tests); nil means the system's.
	RootCAs *x509.CertPool
	// MaxBody bounds an answer (default DefaultMaxBody).
	MaxBody int64
	// HeaderTimeout bounds the wait for an answer to begin (default
	// DefaultHeaderTimeout).
	HeaderTimeout time.Duration
}

// NewTransport returns the transport every front's client shares: the
// network guard's dialer, with opts' certificates and timeouts.
func NewTransport(opts ClientOptions) http.RoundTripper {
	if opts.HeaderTimeout <= 0 {
		opts.HeaderTimeout = DefaultHeaderTimeout
	}
	guarded := netguard.NewClient(opts.Guard).Transport.(*http.Transport).Clone()
	guarded.ResponseHeaderTimeout = opts.HeaderTimeout
	guarded.MaxIdleConnsPerHost = 64
	if opts.RootCAs != nil {
		guarded.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
	}
	max := opts.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	return &boundedTransport{base: guarded, max: max}
}

// NewClient returns the client of one upstream: the owner's credentials
// go with every request to the upstream's origin and to no other, the
// peer is named in X-A2A-Peer (see WithPeer), and redirects are never
// followed. base is NewTransport's.
func NewClient(base http.RoundTripper, upstream string, creds switchboard.FrontCredentials) (*http.Client, error) {
	return NewClientAs(base, upstream, creds, "switchboard-front")
}

// NewClientAs is NewClient for another sender than a front, which names
// itself in User-Agent.
func NewClientAs(base http.RoundTripper, upstream string, creds switchboard.FrontCredentials, userAgent string) (*http.Client, error) {
	origin, err := url.Parse(upstream)
	if err != nil || origin.Host == "" {
		return nil, errors.New("the upstream is not a URL")
	}
	return &http.Client{
		Transport: &credentialTransport{base: base, origin: origin, creds: creds, userAgent: userAgent},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return ErrRedirected
		},
	}, nil
}

// credentialTransport adds the owner's credentials and the peer's label to
// the requests to one origin.
type credentialTransport struct {
	base      http.RoundTripper
	origin    *url.URL
	creds     switchboard.FrontCredentials
	userAgent string
}

// RoundTrip implements http.RoundTripper.
func (c *credentialTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, err := c.Headers(r.Context(), r.URL)
	if err != nil {
		return nil, err
	}
	// A shallow copy with headers of its own: the caller's request is not
	// changed, and nothing else of it needs copying for one round trip.
	out := new(http.Request)
	*out = *r
	out.Header = make(http.Header, len(r.Header)+len(h))
	for k, v := range r.Header {
		if k != "Authorization" { // never a caller's
			out.Header[k] = v
		}
	}
	for k, v := range h {
		out.Header[k] = v
	}
	r = out
	resp, err := c.base.RoundTrip(r)
	observe(r, resp, c.creds.Bearer != "")
	return resp, err
}

// Unwrap implements HeaderTransport.
func (c *credentialTransport) Unwrap() http.RoundTripper { return c.base }

// Headers implements HeaderTransport: the owner's credentials, the peer's
// label and the User-Agent, on the upstream's origin only.
func (c *credentialTransport) Headers(ctx context.Context, u *url.URL) (http.Header, error) {
	if !netguard.SameOrigin(u, c.origin) {
		return nil, fmt.Errorf("%s is not on the upstream's origin: not sent", RedactURL(u.String()))
	}
	h := make(http.Header, len(c.creds.Headers)+3)
	for k, v := range c.creds.Headers {
		h.Set(k, v)
	}
	if c.creds.Bearer != "" {
		h.Set("Authorization", "Bearer "+c.creds.Bearer)
	}
	if p, ok := ctx.Value(peerKey{}).(string); ok && p != "" {
		h.Set("X-A2A-Peer", p)
	}
	h.Set("User-Agent", c.userAgent)
	return h, nil
}

// peerKey is the context key of the peer's label.
type peerKey struct{}

// WithPeer returns ctx carrying the label of the peer whose work the
// requests made with it are: it goes upstream in X-A2A-Peer, made safe for
// a header (printable, at most 200 bytes).
func WithPeer(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, peerKey{}, headerSafe(label))
}

func headerSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxPeerHeader {
		s = s[:maxPeerHeader]
	}
	return strings.TrimSpace(s)
}

// boundedTransport bounds the answers' bodies: every one, but an event
// stream that the request asked for (Accept), whose reader bounds its
// events. An answer that calls itself a stream unasked is bounded as any.
type boundedTransport struct {
	base http.RoundTripper
	max  int64
}

// RoundTrip implements http.RoundTripper.
func (b *boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	if resp.ContentLength > b.max {
		resp.Body.Close()
		return nil, ErrTooLarge
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: b.max}
	return resp, nil
}

// boundedBody fails a read past its bound.
type boundedBody struct {
	io.ReadCloser
	left int64
	end  bool // the body ended exactly at the bound
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.end {
		return 0, io.EOF
	}
	if b.left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left <= 0 && err == nil {
		// One more byte would tell whether the body ends here.
		var one [1]byte
		m, rerr := b.ReadCloser.Read(one[:])
		if m > 0 {
			return n, ErrTooLarge
		}
		if rerr == io.EOF {
			b.end = true
		}
	}
	return n, err
}
