package mcpauth_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// TestCIMDURL: every rule of a client_id URL.
func TestCIMDURL(t *testing.T) {
	const own = "sb.example:443"
	for _, tc := range []struct {
		url     string
		private bool
		ok      bool
	}{
		{"https://client.example/oauth/client.json", false, true},
		{"https://client.example:8443/c", false, true},
		{"https://client.example/c?v=1", false, true},
		{"https://client.example/@scope/c", false, true},
		{"http://client.example/c", false, false},
		{"HTTPS://client.example/c", false, false},
		{"https://user:pw@client.example/c", false, false},
		{"https://user@client.example/c", false, false},
		{"https://client.example/c#frag", false, false},
		{"https://client.example/c#", false, false},
		{"https://client.example", false, false},
		{"https://client.example/", false, false},
		{"https://client.example/./c", false, false},
		{"https://client.example/a/../c", false, false},
		{"https://client.example/a/%2e%2e/c", false, false},
		{"https://client.example/a/%2E/c", false, false},
		{"https://client.example/c/.", false, false},
		{"https://client.example/" + strings.Repeat("a", 489), false, true},
		{"https://client.example/" + strings.Repeat("a", 490), false, false},
		{"https:///c", false, false},
		{"https:client.example/c", false, false},
		{"https://127.0.0.1/c", false, false},
		{"https://10.1.2.3/c", false, false},
		{"https://[::1]/c", false, false},
		{"https://localhost/c", false, false},
		{"https://printer.local/c", false, false},
		{"https://intranet/c", false, false},
		{"https://[fe80::1%25eth0]/c", true, false},
		{"https://127.0.0.1/c", true, true},
		{"https://localhost:8443/c", true, true},
		{"https://sb.example/c", false, false},
		{"https://SB.example:443/c", false, false},
		{"https://sb.example:8443/c", false, true},
	} {
		err := mcpauth.CheckClientIDURL(tc.url, own, tc.private)
		if (err == nil) != tc.ok {
			t.Errorf("%q (private %v): %v, want ok %v", tc.url, tc.private, err, tc.ok)
		}
	}
	if got := mcpauth.OwnHost("https://SB.example/a/helper/mcp"); got != own {
		t.Errorf("OwnHost: %q", got)
	}
}

// TestCIMDIsDocumentClientID: only an https URL is a document's client_id.
func TestCIMDIsDocumentClientID(t *testing.T) {
	for id, want := range map[string]bool{"https://c.example/x": true, "HTTPS://c.example/x": true, "sbc_123": false,
		"http://c.example/x": false, "https://": false, "": false} {
		if mcpauth.IsDocumentClientID(id) != want {
			t.Errorf("%q: want %v", id, want)
		}
	}
}

const docURL = "https://client.example/oauth/client.json"

// TestCIMDParseDocument: every rule of a document.
func TestCIMDParseDocument(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       string // "" accepted
	}{
		{"minimal", `{"client_id":"` + docURL + `","redirect_uris":["http://127.0.0.1/cb"]}`, ""},
		{"full", `{"client_id":"` + docURL + `","client_name":"Doc Client","redirect_uris":["http://localhost:3000/cb","https://app.example/cb"],
			"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"logo_uri":"https://x/y.png"}`, ""},
		{"ten redirects", `{"client_id":"` + docURL + `","redirect_uris":[` + strings.TrimSuffix(strings.Repeat(`"https://app.example/cb",`, 10), ",") + `]}`, ""},
		{"eleven redirects", `{"client_id":"` + docURL + `","redirect_uris":[` + strings.TrimSuffix(strings.Repeat(`"https://app.example/cb",`, 11), ",") + `]}`, mcpauth.ErrInvalidRedirectURI},
		{"no redirects", `{"client_id":"` + docURL + `","redirect_uris":[]}`, mcpauth.ErrInvalidRedirectURI},
		{"redirects absent", `{"client_id":"` + docURL + `"}`, mcpauth.ErrInvalidRedirectURI},
		{"http redirect", `{"client_id":"` + docURL + `","redirect_uris":["http://app.example/cb"]}`, mcpauth.ErrInvalidRedirectURI},
		{"fragment redirect", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb#x"]}`, mcpauth.ErrInvalidRedirectURI},
		{"client_id differs", `{"client_id":"https://client.example/oauth/other.json","redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"client_id trailing slash", `{"client_id":"` + docURL + `/","redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"client_id case", `{"client_id":"` + strings.ToUpper(docURL) + `","redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"client_id absent", `{"redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"client_id key case", `{"CLIENT_ID":"` + docURL + `","redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"client_id number", `{"client_id":1,"redirect_uris":["https://app.example/cb"]}`, mcpauth.ErrInvalidClientMetadata},
		{"secret", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"client_secret":"s"}`, mcpauth.ErrInvalidClientMetadata},
		{"empty secret", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"client_secret":""}`, mcpauth.ErrInvalidClientMetadata},
		{"auth method", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, mcpauth.ErrInvalidClientMetadata},
		{"auth method empty", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":""}`, mcpauth.ErrInvalidClientMetadata},
		{"grants without code", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"grant_types":["refresh_token"]}`, mcpauth.ErrInvalidClientMetadata},
		{"grants empty", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"grant_types":[]}`, mcpauth.ErrInvalidClientMetadata},
		{"grants string", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"grant_types":"authorization_code"}`, mcpauth.ErrInvalidClientMetadata},
		{"array", `[{"client_id":"` + docURL + `"}]`, mcpauth.ErrInvalidClientMetadata},
		{"null", `null`, mcpauth.ErrInvalidClientMetadata},
		{"not JSON", `<html>`, mcpauth.ErrInvalidClientMetadata},
		{"trailing", `{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"]} {}`, mcpauth.ErrInvalidClientMetadata},
	} {
		reg, err := mcpauth.ParseClientDocument([]byte(tc.body), docURL)
		var pe *pairing.Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code != "" && (!errors.As(err, &pe) || pe.Code != tc.code):
			t.Errorf("%s: %v (%+v), want %s", tc.name, err, reg, tc.code)
		}
	}
	reg, err := mcpauth.ParseClientDocument([]byte(`{"client_id":"`+docURL+`","client_name":"  Doc\u0000 Client ","redirect_uris":["https://app.example/cb"]}`), docURL)
	if err != nil || reg.Name != "Doc Client" || reg.ApplicationType != "native" || len(reg.RedirectURIs) != 1 {
		t.Fatalf("name cleaned: %+v %v", reg, err)
	}
	reg, err = mcpauth.ParseClientDocument([]byte(`{"client_id":"`+docURL+`","redirect_uris":["https://app.example/cb"]}`), docURL)
	if err != nil || reg.Name != "MCP client" {
		t.Fatalf("no name: %+v %v", reg, err)
	}
}

// docServer serves a metadata document over TLS on loopback; handle
// answers each request. It counts the requests.
type docServer struct {
	srv   *httptest.Server
	hits  atomic.Int32
	mu    sync.Mutex
	serve http.HandlerFunc // guarded by mu
}

func newDocServer(t *testing.T) *docServer {
	t.Helper()
	d := &docServer{}
	d.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		d.mu.Lock()
		h := d.serve
		d.mu.Unlock()
		h(w, r)
	}))
	d.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused certificate's handshake
	d.srv.StartTLS()
	t.Cleanup(d.srv.Close)
	return d
}

func (d *docServer) set(h http.HandlerFunc) {
	d.mu.Lock()
	d.serve = h
	d.mu.Unlock()
}

// url is the client_id of the document at path.
func (d *docServer) url(path string) string { return d.srv.URL + path }

func (d *docServer) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(d.srv.Certificate())
	return p
}

// document answers with a valid document for the request's URL and the
// Cache-Control given.
func document(cacheControl string, redirects ...string) http.HandlerFunc {
	if len(redirects) == 0 {
		redirects = []string{"http://127.0.0.1/callback"}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":"https://%s%s","client_name":"Doc Client","redirect_uris":["%s"]}`,
			r.Host, r.URL.Path, strings.Join(redirects, `","`))
	}
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newDocuments(d *docServer, c *clock, limiter switchboard.RateLimiter) *mcpauth.Documents {
	return mcpauth.NewDocuments(mcpauth.DocumentOptions{Guard: netguard.Options{AllowPrivate: true}, RootCAs: d.roots(),
		Limiter: limiter, Now: c.Now})
}

// TestCIMDCacheTTL: max-age clamped to a minute–a day, an hour without it;
// no-store and no-cache are not cached.
func TestCIMDCacheTTL(t *testing.T) {
	d := newDocServer(t)
	for _, tc := range []struct {
		header     string
		cachedFor  time.Duration // 0: not cached
		fetchAgain bool
	}{
		{"", time.Hour, false},
		{"max-age=600", 10 * time.Minute, false},
		{"public, max-age=\"600\"", 10 * time.Minute, false},
		{"max-age=0", time.Minute, false},
		{"max-age=5", time.Minute, false},
		{"max-age=999999999999", 24 * time.Hour, false},
		{"max-age=abc", time.Hour, false},
		{"no-store", 0, true},
		{"max-age=600, no-store", 0, true},
		{"No-Cache", 0, true},
	} {
		c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		docs := newDocuments(d, c, nil)
		d.set(document(tc.header))
		id := d.url("/c/" + strings.NewReplacer(" ", "", ",", "", "=", "", `"`, "").Replace(tc.header) + "x.json")
		get := func() {
			t.Helper()
			if _, err := docs.Client(context.Background(), id, "sb.example:443", "192.0.2.1"); err != nil {
				t.Fatalf("%q: %v", tc.header, err)
			}
		}
		d.hits.Store(0)
		get()
		get()
		if tc.fetchAgain {
			if d.hits.Load() != 2 {
				t.Errorf("%q: %d fetches for two uses, want 2 (not cached)", tc.header, d.hits.Load())
			}
			continue
		}
		c.Add(tc.cachedFor - time.Second)
		get()
		if d.hits.Load() != 1 {
			t.Errorf("%q: fetched again within %v", tc.header, tc.cachedFor)
		}
		c.Add(time.Second)
		get()
		if d.hits.Load() != 2 {
			t.Errorf("%q: not fetched again after %v", tc.header, tc.cachedFor)
		}
	}
}

// TestCIMDErrorsNotCached: a failed fetch is tried again on the next
// use; a good document then is cached.
func TestCIMDErrorsNotCached(t *testing.T) {
	d := newDocServer(t)
	c := &clock{now: time.Now()}
	docs := newDocuments(d, c, nil)
	id := d.url("/client.json")
	d.set(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	if _, err := docs.Client(context.Background(), id, "", "192.0.2.1"); !errors.Is(err, mcpauth.ErrClientDocument) {
		t.Fatalf("a 503: %v", err)
	}
	d.set(document(""))
	for range 3 {
		c, err := docs.Client(context.Background(), id, "", "192.0.2.1")
		if err != nil || c.ID != id || c.Name != "Doc Client" {
			t.Fatalf("after the error: %+v %v", c, err)
		}
	}
	if d.hits.Load() != 2 {
		t.Fatalf("%d fetches, want 2 (the error, then one cached document)", d.hits.Load())
	}
}

// TestCIMDFetchBounds: the request asks for JSON and carries no
// credentials; a document past 5120 bytes, a redirect (not followed),
// another status, a slow server, an unknown certificate and a guarded
// address are refused, each with the same generic error.
func TestCIMDFetchBounds(t *testing.T) {
	d := newDocServer(t)
	c := &clock{now: time.Now()}
	docs := mcpauth.NewDocuments(mcpauth.DocumentOptions{Guard: netguard.Options{AllowPrivate: true}, RootCAs: d.roots(),
		Now: c.Now, Timeout: 500 * time.Millisecond})
	ctx := context.Background()

	var seen http.Header
	d.set(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		document("no-store")(w, r)
	})
	if _, err := docs.Client(ctx, d.url("/client.json"), "", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if seen.Get("Accept") != "application/json" || seen.Get("Authorization") != "" || seen.Get("Cookie") != "" {
		t.Fatalf("request headers: %v", seen)
	}

	pad := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			head := fmt.Sprintf(`{"client_id":"https://%s%s","redirect_uris":["http://127.0.0.1/cb"],"x":"`, r.Host, r.URL.Path)
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, head+strings.Repeat("a", n-len(head)-2)+`"}`)
		}
	}
	d.set(pad(mcpauth.MaxClientDocument))
	if _, err := docs.Client(ctx, d.url("/exact.json"), "", "192.0.2.1"); err != nil {
		t.Fatalf("a document of exactly %d bytes: %v", mcpauth.MaxClientDocument, err)
	}
	unblock := make(chan struct{})
	t.Cleanup(func() { close(unblock) })
	var redirectTarget atomic.Int32
	for name, h := range map[string]http.HandlerFunc{
		"too large": pad(mcpauth.MaxClientDocument + 1),
		"too large, chunked": func(w http.ResponseWriter, r *http.Request) {
			for range 6 {
				_, _ = w.Write([]byte(strings.Repeat(" ", 1000)))
				w.(http.Flusher).Flush()
			}
			document("")(w, r)
		},
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/target.json" {
				redirectTarget.Add(1)
				document("")(w, r)
				return
			}
			http.Redirect(w, r, "/target.json", http.StatusFound)
		},
		"permanent redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/target.json", http.StatusPermanentRedirect)
		},
		"404": func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
		"slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-unblock:
			}
		},
		"slow body": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"client_id":`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-unblock:
			}
		},
	} {
		d.set(h)
		_, err := docs.Client(ctx, d.url("/"+strings.ReplaceAll(name, " ", "-")+".json"), "", "192.0.2.1")
		if !errors.Is(err, mcpauth.ErrClientDocument) {
			t.Errorf("%s: %v, want ErrClientDocument", name, err)
		}
	}
	if redirectTarget.Load() != 0 {
		t.Error("a redirect was followed")
	}

	d.set(document(""))
	strange := mcpauth.NewDocuments(mcpauth.DocumentOptions{Guard: netguard.Options{AllowPrivate: true}, Now: c.Now})
	if _, err := strange.Client(ctx, d.url("/client.json"), "", "192.0.2.1"); !errors.Is(err, mcpauth.ErrClientDocument) {
		t.Errorf("a certificate of an unknown authority: %v", err)
	}
	closed := mcpauth.NewDocuments(mcpauth.DocumentOptions{RootCAs: d.roots(), Now: c.Now})
	if _, err := closed.Client(ctx, d.url("/client.json"), "", "192.0.2.1"); !errors.Is(err, mcpauth.ErrClientDocument) {
		t.Errorf("loopback with the guard closed: %v", err)
	}
	// The name passes (the guard is opened for another range), the
	// address it resolves to does not.
	other := mcpauth.NewDocuments(mcpauth.DocumentOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("10.99.0.0/16")}},
		RootCAs: d.roots(), Now: c.Now})
	hits := d.hits.Load()
	if _, err := other.Client(ctx, strings.Replace(d.url("/client.json"), "127.0.0.1", "localhost", 1), "", "192.0.2.1"); !errors.Is(err, mcpauth.ErrClientDocument) {
		t.Errorf("a name that resolves to loopback: %v", err)
	}
	if _, err := docs.Client(ctx, d.url("/own.json"), mcpauth.OwnHost(d.srv.URL+"/mcp"), "192.0.2.1"); !errors.Is(err, mcpauth.ErrClientDocument) {
		t.Errorf("this server's own host: %v", err)
	}
	if d.hits.Load() != hits {
		t.Error("a refused address was fetched")
	}
}

// TestCIMDFetchRate: an address fetches DocumentFetchesPerHour (here
// 2) documents; answers from the cache are not counted; another address
// has its own count.
func TestCIMDFetchRate(t *testing.T) {
	d := newDocServer(t)
	c := &clock{now: time.Now()}
	docs := newDocuments(d, c, ratelimit.NewMemory(2, time.Hour))
	ctx := context.Background()
	d.set(document(""))
	for range 5 {
		if _, err := docs.Client(ctx, d.url("/cached.json"), "", "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	d.set(document("no-store"))
	if _, err := docs.Client(ctx, d.url("/a.json"), "", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Client(ctx, d.url("/a.json"), "", "192.0.2.1"); switchboard.ErrorCode(err) != switchboard.ERATELIMITED {
		t.Fatalf("a third fetch: %v, want ERATELIMITED", err)
	}
	if _, err := docs.Client(ctx, d.url("/cached.json"), "", "192.0.2.1"); err != nil {
		t.Fatalf("a cached document past the limit: %v", err)
	}
	if _, err := docs.Client(ctx, d.url("/a.json"), "", "192.0.2.2"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// TestCIMDCheckRequest: a client_id URL is fetched and then treated
// as a registered client: its redirect URIs (loopback on any port), its
// name for the label; the code is redeemed and refreshed with the URL as
// client_id. A document that could not be used is a page error that
// tells nothing of the fetch.
func TestCIMDCheckRequest(t *testing.T) {
	svc, g, _ := newService(t)
	d := newDocServer(t)
	svc.Documents = newDocuments(d, &clock{now: time.Now()}, nil)
	ctx := context.Background()
	d.set(document("", "http://127.0.0.1/callback", "https://app.example/cb"))
	id := d.url("/client.json")
	c := &switchboard.OAuthClient{ID: id}
	req, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if req.Client.ID != id || req.Client.Name != "Doc Client" || req.DocumentHost != strings.TrimPrefix(d.srv.URL, "https://") {
		t.Fatalf("request %+v, client %+v", req, req.Client)
	}
	to, err := svc.Approve(ctx, req, switchboard.OAuthTarget{AccountID: g.AccountID, AgentID: g.ID}, "https://sb.example/a/helper")
	must(t, err)
	code := to[strings.Index(to, "code=")+5:]
	code = code[:strings.IndexByte(code, '&')]
	ep := mcpauth.Endpoint{AgentID: g.ID, Resource: resource}
	form := map[string][]string{"code": {code}, "client_id": {id}, "code_verifier": {strings.Repeat("v", 43)}}
	pair, err := svc.Exchange(ctx, form, ep)
	if err != nil || pair.Label != "mcp-doc-client" {
		t.Fatalf("exchange: %+v %v", pair, err)
	}
	if _, err := svc.Refresh(ctx, map[string][]string{"refresh_token": {pair.RefreshToken}, "client_id": {id + "x"}}, ep); err == nil {
		t.Fatal("a refresh with another client_id")
	}
	grants, err := svc.GrantsByAccess(ctx, &g.AccountID)
	must(t, err)
	if len(grants) != 0 {
		t.Fatalf("the grant outlived a refresh with another client_id: %+v", grants)
	}

	for name, set := range map[string][]string{
		"redirect not listed": {"redirect_uri", "https://evil.example/cb"},
		"private host":        {"client_id", "https://10.0.0.1/client.json"},
	} {
		var pe *mcpauth.PageError
		if _, err := svc.CheckRequest(ctx, request(c, set...), resource, "192.0.2.1"); !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a page error", name, err)
		}
	}
	d.set(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"client_id":"https://elsewhere.example/client.json","redirect_uris":["http://127.0.0.1/callback"]}`)
	})
	var pe *mcpauth.PageError
	_, err = svc.CheckRequest(ctx, request(&switchboard.OAuthClient{ID: d.url("/mismatch.json")}), resource, "192.0.2.1")
	if !errors.As(err, &pe) || strings.Contains(pe.Message, "elsewhere") || strings.Contains(pe.Message, "client_id") ||
		!strings.Contains(pe.Message, "client metadata document could not be used") {
		t.Fatalf("a client_id mismatch: %v", err)
	}
}

// TestCIMDCheckRequestRateLimited: an authorization request whose client
// document would be fetched past the address's limit is a 429 page.
func TestCIMDCheckRequestRateLimited(t *testing.T) {
	svc, _, _ := newService(t)
	d := newDocServer(t)
	svc.Documents = newDocuments(d, &clock{now: time.Now()}, ratelimit.NewMemory(1, time.Hour))
	d.set(document("no-store"))
	c := &switchboard.OAuthClient{ID: d.url("/client.json")}
	ctx := context.Background()
	if _, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1"); err != nil {
		t.Fatalf("the first fetch: %v", err)
	}
	var pe *mcpauth.PageError
	if _, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1"); !errors.As(err, &pe) || pe.Status != http.StatusTooManyRequests {
		t.Fatalf("past the limit: %v, want a 429 page", err)
	}
}
