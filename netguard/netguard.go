package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Options configure a guarded client. Zero values mean defaults.
type Options struct {
	// AllowPrivate lets the client reach every address: for deployments on
	// a private network and for tests. Off by default.
	AllowPrivate bool
	// Allow lists prefixes that are reachable even though they are special
	// (for tests that must reach one loopback server and no other).
	Allow []netip.Prefix
	// Timeout bounds a whole request, redirects included (default 30 s).
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed (default 5).
	MaxRedirects int
}

// ErrRefused is wrapped by every error for an address the guard refuses.
var ErrRefused = errors.New("refused by the network guard")

// NewClient returns an HTTP client that dials only addresses the options
// allow. It ignores proxy settings from the environment: a proxy would dial
// the real address in the guard's place.
func NewClient(opts Options) *http.Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = 5
	}
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return opts.check(address)
		},
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   opts.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= opts.MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", opts.MaxRedirects)
			}
			// Go's client names the URL redirected from, query and all,
			// to the next hop: a push or wake URL may carry a key there.
			req.Header.Del("Referer")
			return CheckURL(req.URL.String())
		},
	}
}

// check refuses a dial to a special address unless the options allow it.
func (o Options) check(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: bad address %q", ErrRefused, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrRefused, host)
	}
	// A zone (fe80::1%eth0) names an interface, not another address:
	// netip.Prefix.Contains is false for any zoned address, so drop it
	// before comparing.
	ip = ip.Unmap().WithZone("")
	if o.AllowPrivate {
		return nil
	}
	for _, p := range o.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	if Special(ip) {
		return fmt.Errorf("%w: %s is a private or special-purpose address", ErrRefused, ip)
	}
	return nil
}

// CheckURL refuses URLs a guarded client never requests, whatever their
// host resolves to: schemes other than http and https, and credentials in
// the URL.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q", ErrRefused, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL", ErrRefused)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: no host", ErrRefused)
	}
	if strings.Contains(u.Hostname(), "%") {
		return fmt.Errorf("%w: an IPv6 zone in the host names a local interface", ErrRefused)
	}
	return nil
}

// FollowOnlyBodyKeepingRedirects makes c follow a redirect only when it
// keeps the request's method and body (307, 308): after a 301, 302 or 303
// Go's client would send a POST again as a GET without its body, so that
// answer is returned to the caller instead. A hop that is followed is
// still checked by c's own policy (the guard's, for a client of
// NewClient), then by also when it is not nil.
func FollowOnlyBodyKeepingRedirects(c *http.Client, also func(req *http.Request, via []*http.Request) error) {
	guard := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.Response != nil && req.Response.StatusCode != http.StatusTemporaryRedirect &&
			req.Response.StatusCode != http.StatusPermanentRedirect {
			return http.ErrUseLastResponse
		}
		if guard != nil {
			if err := guard(req, via); err != nil {
				return err
			}
		}
		if also != nil {
			return also(req, via)
		}
		return nil
	}
}

// AllowsPlainHTTP reports whether senders of secrets (push tokens, wake
// keys) may use plain http under o: only where the operator opened the
// guard (AllowPrivate, or an Allow list in tests), that is on a private
// network. Elsewhere the secret would cross the internet in clear.
func (o Options) AllowsPlainHTTP() bool {
	return o.AllowPrivate || len(o.Allow) > 0
}

// Allows reports whether a client made with o may dial ip: every address
// when AllowPrivate is set, else one that is not special, or is in Allow.
// Callers that resolve a name themselves (to check every address before
// dialing one) judge each with it.
func (o Options) Allows(ip netip.Addr) bool {
	return o.check(netip.AddrPortFrom(ip, 0).String()) == nil
}
