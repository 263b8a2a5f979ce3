package mcpauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// Defaults of the fetcher of Client ID Metadata Documents.
const (
	// DocumentFetchTimeout bounds one fetch, from the DNS lookup to the
	// last byte.
	DocumentFetchTimeout = 5 * time.Second
	// DocumentFetchesPerHour is the most documents fetched for one
	// address an hour; answers from the cache are not counted.
	DocumentFetchesPerHour = 30
)

// ErrClientDocument is wrapped by every error of a client_id URL whose
// document could not be fetched or broke a rule. Its text is all the
// client and the owner are told; the detail is logged.
var ErrClientDocument = errors.New("client metadata document could not be used")

// DocumentOptions configure Documents. Zero values mean defaults.
type DocumentOptions struct {
	// Guard is the network guard's setting: a client_id URL that names a
	// private host, or whose name resolves to one, is refused unless it
	// is opened (AllowPrivate, or Allow in tests).
	Guard netguard.Options
	// RootCAs, if set, are the certificates documents' hosts are checked
	// against (tests); nil means the system's.
	RootCAs *x509.CertPool
	// Limiter counts fetches per requesting address (default: in this
	// process, DocumentFetchesPerHour an hour).
	Limiter switchboard.RateLimiter
	// Timeout bounds one fetch (default DocumentFetchTimeout).
	Timeout time.Duration
	// Now is the clock of the cache; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Documents fetches, checks and caches Client ID Metadata Documents: the
// clients whose client_id is an https URL (docs/mcp.md, "OAuth"). The
// cache is this process's own: each instance of a cluster fetches a
// document for itself.
type Documents struct {
	opts         DocumentOptions // immutable after construction
	allowPrivate bool            // immutable after construction
	client       *http.Client    // immutable after construction
	cache        *documentCache
}

// NewDocuments returns a fetcher of Client ID Metadata Documents. It
// never follows a redirect, sends no cookie or credential, speaks
// HTTP/1.1 with one connection per fetch, and dials only an address it
// resolved and checked (every address of the name must pass the guard),
// with TLS verified for the URL's host name.
func NewDocuments(opts DocumentOptions) *Documents {
	if opts.Timeout <= 0 {
		opts.Timeout = DocumentFetchTimeout
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.NewMemory(DocumentFetchesPerHour, time.Hour)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Documents{opts: opts, allowPrivate: opts.Guard.AllowPrivate || len(opts.Guard.Allow) > 0,
		cache: newDocumentCache()}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.dial,
		TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    opts.Timeout,
		ResponseHeaderTimeout:  opts.Timeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 16 << 10,
	}
	d.client = &http.Client{Transport: transport, Timeout: opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return d
}

// Client returns the client that the document at clientID describes,
// from the cache or fetched for requester (an address, for the rate
// limit). ownHost is this deployment's host:port (OwnHost), which a
// client_id may not name. Errors wrap ErrClientDocument, but ERATELIMITED
// when requester fetched DocumentFetchesPerHour documents in the hour.
func (d *Documents) Client(ctx context.Context, clientID, ownHost, requester string) (*switchboard.OAuthClient, error) {
	if err := CheckClientIDURL(clientID, ownHost, d.allowPrivate); err != nil {
		return nil, d.refuse(clientID, err)
	}
	now := d.opts.Now()
	if c := d.cache.get(clientID, now); c != nil {
		return c, nil
	}
	if ok, _, _ := d.opts.Limiter.Allow(ctx, "cimd-fetch/"+requester); !ok {
		return nil, switchboard.Errorf(switchboard.ERATELIMITED, "too many client metadata documents fetched for your address; try again later")
	}
	body, header, err := d.fetch(ctx, clientID)
	if err != nil {
		return nil, d.refuse(clientID, err)
	}
	reg, err := ParseClientDocument(body, clientID)
	if err != nil {
		return nil, d.refuse(clientID, err)
	}
	c := &switchboard.OAuthClient{ID: clientID, Name: reg.Name, RedirectURIs: reg.RedirectURIs,
		ApplicationType: reg.ApplicationType, Requester: requester, CreatedAt: now.UTC()}
	if ttl, ok := cacheTTL(header.Values("Cache-Control")); ok {
		d.cache.put(clientID, c, now, now.Add(ttl))
	}
	d.opts.Logger.Info("mcp oauth client metadata document fetched", "client_id", clientID, "client_name", c.Name)
	return c, nil
}

// refuse logs why a document could not be used and returns the error the
// caller may show.
func (d *Documents) refuse(clientID string, err error) error {
	d.opts.Logger.Warn("mcp oauth client metadata document refused", "client_id", clientID, "err", err)
	return fmt.Errorf("%w: %w", ErrClientDocument, err)
}

// fetch gets the document: 200 with at most MaxClientDocument bytes.
func (d *Documents) fetch(ctx context.Context, clientID string) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "switchboard")
	res, err := d.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return nil, nil, fmt.Errorf("answered a redirect (HTTP %d), which is not followed", res.StatusCode)
	case res.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("answered HTTP %d", res.StatusCode)
	case res.ContentLength > MaxClientDocument:
		return nil, nil, fmt.Errorf("the document is %d bytes, more than %d", res.ContentLength, MaxClientDocument)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxClientDocument+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read the document: %w", err)
	}
	if len(body) > MaxClientDocument {
		return nil, nil, fmt.Errorf("the document is more than %d bytes", MaxClientDocument)
	}
	return body, res.Header, nil
}

// dial resolves the host, requires every address it has to pass the
// guard, and dials a checked address (the dialer checks it again).
func (d *Documents) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	for _, ip := range ips {
		if !d.opts.Guard.Allows(ip) {
			return nil, fmt.Errorf("%w: %s resolves to %s", netguard.ErrRefused, host, ip)
		}
	}
	dialer := &net.Dialer{Timeout: d.opts.Timeout}
	var firstErr error
	for _, ip := range ips {
		conn, err := dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// hostOf is the host of a client_id URL, as the consent page names it.
func hostOf(clientID string) string {
	u, err := url.Parse(clientID)
	if err != nil {
		return ""
	}
	return u.Host
}
