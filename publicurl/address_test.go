package publicurl_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// handleCases are names read against a base URL, and what they name.
var handleCases = []struct {
	base, to string
	handle   string // "" with ok false
}{
	// A handle is a handle, whatever this deployment's address.
	{"https://sb.example", "bob", "bob"},
	{"https://sb.example", " BOB ", "bob"},
	{"https://sb.example", "", ""},
	// This deployment's address, as written or with what names the same.
	{"https://sb.example", "https://sb.example/a/bob", "bob"},
	{"https://sb.example", "https://sb.example/a/bob/", "bob"},
	{"https://sb.example", "  HTTPS://SB.Example:443/a/Bob  ", "bob"},
	{"https://sb.example", "https://sb.example/a/b%6Fb", "bob"},
	{"http://127.0.0.1:8080", "http://127.0.0.1:8080/a/bob", "bob"},
	{"http://sb.example", "http://sb.example:80/a/bob", "bob"},
	{"http://[::1]:8080", "http://[::1]:8080/a/bob", "bob"},
	{"https://sb.example/sb", "https://sb.example/sb/a/bob", "bob"},
	{"https://sb.example/sb/", "https://sb.example/sb/a/bob/", "bob"},
	// Another deployment's: another host, scheme or port.
	{"https://sb.example", "https://other.example/a/bob", ""},
	{"https://sb.example", "https://sb.example.other.example/a/bob", ""},
	{"https://sb.example", "http://sb.example/a/bob", ""},
	{"https://sb.example", "https://sb.example:8443/a/bob", ""},
	{"http://127.0.0.1:8080", "http://127.0.0.2:8080/a/bob", ""},
	{"http://127.0.0.1:8080", "http://127.0.0.1/a/bob", ""},
	{"https://sb.example", "ftp://sb.example/a/bob", ""},
	{"https://sb.example", "https:sb.example/a/bob", ""}, // opaque
	// This host, but no address of it.
	{"https://sb.example", "https://user@sb.example/a/bob", ""},
	{"https://sb.example", "https://user:pw@sb.example/a/bob", ""},
	{"https://sb.example", "https://sb.example/a/bob?x=1", ""},
	{"https://sb.example", "https://sb.example/a/bob?", ""},
	{"https://sb.example", "https://sb.example/a/bob#top", ""},
	{"https://sb.example", "https://sb.example/a/bob/mcp", ""},
	{"https://sb.example", "https://sb.example/a/bob/.well-known/agent-card.json", ""},
	{"https://sb.example", "https://sb.example/a/bob//", ""},
	{"https://sb.example", "https://sb.example/x/a/bob", ""},
	{"https://sb.example", "https://sb.example//a/bob", ""},
	{"https://sb.example", "https://sb.example/A/bob", ""},
	{"https://sb.example", "https://sb.example/a/", ""},
	{"https://sb.example", "https://sb.example/a", ""},
	{"https://sb.example", "https://sb.example/", ""},
	{"https://sb.example", "https://sb.example", ""},
	{"https://sb.example", "https://sb.example/a/bob%2Fx", ""},
	{"https://sb.example", "https://sb.example/a/%20bob", ""},
	{"https://sb.example", "https://sb.example/a/b_b", ""},
	{"https://sb.example", "https://sb.example/a/0196f1c2-7d3e-7a00-8000-000000000001", ""}, // an id, not a handle
	// Under a base with a path, only under that path.
	{"https://sb.example/sb", "https://sb.example/a/bob", ""},
	{"https://sb.example/sb", "https://sb.example/sbx/a/bob", ""},
	{"https://sb.example/sb", "https://sb.example/SB/a/bob", ""},
	// Anything with a ':' is a URL, never a handle.
	{"https://sb.example", "bob:", ""},
	{"https://sb.example", "sb.example:443/a/bob", ""},
	{"https://sb.example", "https://sb example/a/bob", ""},
	{"https://sb.example", "1a:b", ""},
	// A base that is no URL has no address.
	{"", "https://sb.example/a/bob", ""},
	{"sb.example", "https://sb.example/a/bob", ""},
}

// TestHandleAt: a handle is read as it is; a URL names an agent only when
// it is an address of the deployment at base ({base}/a/{handle}, on its
// scheme, host and port, with nothing else), whatever handle its path
// holds.
func TestHandleAt(t *testing.T) {
	for _, c := range handleCases {
		handle, ok, err := publicurl.HandleAt(context.Background(), c.base, c.to, nil)
		if err != nil {
			t.Fatalf("HandleAt(%q, %q): %v", c.base, c.to, err)
		}
		if handle != c.handle || ok != (c.handle != "" || !strings.Contains(c.to, ":")) {
			t.Errorf("HandleAt(%q, %q) = %q, %t; want %q", c.base, c.to, handle, ok, c.handle)
		}
	}
}

// TestResolverHandle: a request-derived base is the request's (its Host,
// the forwarded headers when trusted); a configured public URL is the
// only one.
func TestResolverHandle(t *testing.T) {
	r := httptest.NewRequest("POST", "http://sb.example:8080/tasks", nil)
	r.Header.Set("X-Forwarded-Host", "proxy.example")
	r.Header.Set("X-Forwarded-Proto", "https")
	for _, c := range []struct {
		urls publicurl.Resolver
		to   string
		ok   bool
	}{
		{publicurl.Resolver{}, "http://sb.example:8080/a/bob", true},
		{publicurl.Resolver{}, "https://proxy.example/a/bob", false},
		{publicurl.Resolver{TrustForwarded: true}, "https://proxy.example/a/bob", true},
		{publicurl.Resolver{TrustForwarded: true}, "http://sb.example:8080/a/bob", false},
		{publicurl.Resolver{PublicURL: "https://public.example/sb"}, "https://public.example/sb/a/bob", true},
		{publicurl.Resolver{PublicURL: "https://public.example/sb"}, "http://sb.example:8080/a/bob", false},
		{publicurl.Resolver{PublicURL: "https://public.example/sb"}, "bob", true},
	} {
		handle, ok, err := c.urls.Handle(r, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.ok || (ok && handle != "bob") {
			t.Errorf("%+v: Handle(%q) = %q, %t; want %t", c.urls, c.to, handle, ok, c.ok)
		}
	}
}

// TestNotAddress: the refusal names what was given, quoted and cut when
// it is long or holds what a terminal would read.
func TestNotAddress(t *testing.T) {
	for to, want := range map[string]string{
		"https://other.example/a/bob": `https://other.example/a/bob is not an address of this deployment; do this`,
		"https://x.example/\x1b[2J":   `"https://x.example/\x1b[2J" is not an address of this deployment; do this`,
		strings.Repeat("é", 150):      `"` + strings.Repeat("é", 100) + `…" is not an address of this deployment; do this`,
	} {
		err := publicurl.NotAddress(to, "do this")
		if switchboard.ErrorCode(err) != switchboard.EINVALID || switchboard.ErrorMessage(err) != want {
			t.Errorf("NotAddress(%q): %v, %q", to, switchboard.ErrorCode(err), switchboard.ErrorMessage(err))
		}
	}
}

// FuzzHandleAt reads any name against any base: a name without a ':' is
// its handle; a URL it accepts holds a valid handle, names the same agent
// when written as {base}/a/{handle}, and is refused once its host is
// another's.
func FuzzHandleAt(f *testing.F) {
	for _, c := range handleCases {
		f.Add(c.base, c.to)
	}
	f.Fuzz(func(t *testing.T, base, to string) {
		ctx := context.Background()
		handle, ok, _ := publicurl.HandleAt(ctx, base, to, nil)
		if !strings.Contains(to, ":") {
			if !ok || handle != strings.ToLower(strings.TrimSpace(to)) {
				t.Fatalf("the handle %q read as %q, %t", to, handle, ok)
			}
			return
		}
		if !ok {
			if handle != "" {
				t.Fatalf("refused with a handle %q", handle)
			}
			return
		}
		if h, err := switchboard.NormalizeHandle(handle); err != nil || h != handle {
			t.Fatalf("%q read as %q, which is no handle", to, handle)
		}
		u, err := url.Parse(strings.TrimSpace(to))
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", to, err)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("%q accepted with credentials, a query or a fragment", to)
		}
		if b, err := url.Parse(base); err == nil && !strings.EqualFold(b.Hostname(), "other.invalid") {
			u.Host = "other.invalid"
			if _, ok, _ := publicurl.HandleAt(ctx, base, u.String(), nil); ok {
				t.Fatalf("%q accepted on base %q", u.String(), base)
			}
		}
		if !strings.ContainsAny(base, "?#") {
			for _, addr := range []string{strings.TrimRight(base, "/") + "/a/" + handle, strings.TrimRight(base, "/") + "/a/" + handle + "/"} {
				if h, ok, _ := publicurl.HandleAt(ctx, base, addr, nil); !ok || h != handle {
					t.Fatalf("%q accepted as %q, but its address %q reads as %q, %t", to, handle, addr, h, ok)
				}
			}
		}
	})
}

// domainStore returns a store where bob holds the domain bot.example.com
// and carl none.
func domainStore(t *testing.T) *sqlstore.DB {
	t.Helper()
	db := sqlitetest.Open(t)
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	for handle, domain := range map[string]string{"bob": "bot.example.com", "carl": ""} {
		g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Mode: switchboard.ModeInbox, Domain: domain}
		if err := db.CreateAgent(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestHandleAtDomain: the root of an agent's domain names the agent, on
// https (or the deployment's own scheme) and the default port, with or
// without a trailing slash; anything more, or a host no agent holds, names
// nobody; without a finder no domain names anyone.
func TestHandleAtDomain(t *testing.T) {
	db := domainStore(t)
	ctx := context.Background()
	for _, c := range []struct {
		base, to, handle string
	}{
		{"https://sb.example", "https://bot.example.com", "bob"},
		{"https://sb.example", "https://bot.example.com/", "bob"},
		{"https://sb.example", "  HTTPS://Bot.Example.COM:443/ ", "bob"},
		{"https://sb.example", "https://bot.example.com./", "bob"},
		{"http://127.0.0.1:8080", "https://bot.example.com", "bob"},
		{"http://127.0.0.1:8080", "http://bot.example.com/", "bob"},
		{"http://127.0.0.1:8080", "http://bot.example.com:80", "bob"},
		// The deployment's own addresses still read as they did.
		{"https://sb.example", "https://sb.example/a/carl", "carl"},
		{"https://sb.example", "https://sb.example/a/bob", "bob"},
		// No address of the agent domain.
		{"https://sb.example", "http://bot.example.com", ""},
		{"https://sb.example", "https://bot.example.com:8443/", ""},
		{"https://sb.example", "https://bot.example.com/mcp", ""},
		{"https://sb.example", "https://bot.example.com/a/bob", ""},
		{"https://sb.example", "https://bot.example.com//", ""},
		{"https://sb.example", "https://bot.example.com/?x=1", ""},
		{"https://sb.example", "https://bot.example.com/#x", ""},
		{"https://sb.example", "https://u@bot.example.com/", ""},
		{"https://sb.example", "ftp://bot.example.com/", ""},
		{"https://sb.example", "https://other.example.com/", ""},
		{"https://sb.example", "https://example.com/", ""},
		{"https://sb.example", "https://sb.example/", ""},
		{"https://sb.example", "https://127.0.0.1/", ""},
	} {
		handle, ok, err := publicurl.HandleAt(ctx, c.base, c.to, db)
		if err != nil || handle != c.handle || ok != (c.handle != "") {
			t.Errorf("HandleAt(%q, %q) = %q, %t, %v; want %q", c.base, c.to, handle, ok, err, c.handle)
		}
	}
	if _, ok, _ := publicurl.HandleAt(ctx, "https://sb.example", "https://bot.example.com/", nil); ok {
		t.Error("a domain named an agent without a finder")
	}
	// A store that fails says so, rather than "no address".
	failing := sqlitetest.Open(t)
	failing.Close()
	if _, ok, err := publicurl.HandleAt(ctx, "https://sb.example", "https://bot.example.com/", failing); ok || err == nil {
		t.Errorf("a failed lookup: %t, %v", ok, err)
	}
}

// TestAddress: an agent's address is {base}/a/{handle}, or the root of its
// domain on the deployment's scheme; the console, wakes and the hub name
// the same.
func TestAddress(t *testing.T) {
	bob := &switchboard.Agent{Handle: "bob", Domain: "bot.example.com"}
	carl := &switchboard.Agent{Handle: "carl"}
	for _, c := range []struct {
		base  string
		agent *switchboard.Agent
		want  string
	}{
		{"https://sb.example", bob, "https://bot.example.com"},
		{"HTTP://127.0.0.1:8080", bob, "http://bot.example.com"},
		{"http://127.0.0.1:8080", carl, "http://127.0.0.1:8080/a/carl"},
		{"https://sb.example/sb", carl, "https://sb.example/sb/a/carl"},
	} {
		if got := publicurl.AddressAt(c.base, c.agent); got != c.want {
			t.Errorf("AddressAt(%q, %s) = %q, want %q", c.base, c.agent.Handle, got, c.want)
		}
	}
	r := httptest.NewRequest("GET", "https://sb.example/a/bob", nil)
	if got := (publicurl.Resolver{}).Address(r, bob); got != "https://bot.example.com" {
		t.Errorf("Address over TLS: %q", got)
	}
	r = httptest.NewRequest("GET", "http://127.0.0.1:9/a/bob", nil)
	if got := (publicurl.Resolver{PublicURL: "https://sb.example"}).Address(r, bob); got != "https://bot.example.com" {
		t.Errorf("Address with an https public URL: %q", got)
	}
	if got := (publicurl.Resolver{}).Address(r, bob); got != "http://bot.example.com" {
		t.Errorf("Address on plain http: %q", got)
	}
}

// TestBaseOnAgentDomain: a request that reached an agent domain has the
// deployment's own base, never the agent's host: the public URL, or the
// first own domain on the request's scheme.
func TestBaseOnAgentDomain(t *testing.T) {
	r := httptest.NewRequest("GET", "https://bot.example.com/device", nil)
	r = r.WithContext(publicurl.WithAgentDomain(r.Context(), "bot.example.com"))
	if got := (publicurl.Resolver{PublicURL: "https://sb.example"}).Base(r); got != "https://sb.example" {
		t.Errorf("with a public URL: %q", got)
	}
	if got := (publicurl.Resolver{Domains: []string{"sb.example", "sb2.example"}}).Base(r); got != "https://sb.example" {
		t.Errorf("with own domains: %q", got)
	}
	if publicurl.AgentDomain(r) != "bot.example.com" {
		t.Error("the request does not say which agent domain it reached")
	}
	plain := httptest.NewRequest("GET", "http://bot.example.com/", nil)
	if got := (publicurl.Resolver{}).Base(plain); got != "http://bot.example.com" {
		t.Errorf("a request that reached no agent domain: %q", got)
	}
}

// TestOwn: the deployment's own names are its public URL's host and its
// domains, compared as Host headers are read.
func TestOwn(t *testing.T) {
	u := publicurl.Resolver{PublicURL: "https://SB.example:8443/sb", Domains: []string{"sb2.example"}}
	for host, want := range map[string]bool{
		"sb.example": true, "sb2.example": true, "bot.example.com": false, "": false, "example": false,
	} {
		if got := u.Own(host); got != want {
			t.Errorf("Own(%q) = %t, want %t", host, got, want)
		}
	}
	if (publicurl.Resolver{}).Own("localhost") || (publicurl.Resolver{}).Known() || !u.Known() {
		t.Error("a resolver without a public URL or domains knows its own names")
	}
}

// TestHost: the host a request was sent to is its Host header, or behind
// a trusted proxy the last X-Forwarded-Host, read as agent domains are
// held.
func TestHost(t *testing.T) {
	r := httptest.NewRequest("GET", "http://Bot.Example.com:8080/", nil)
	r.Header.Add("X-Forwarded-Host", "evil.example, Proxied.Example.com")
	if got := (publicurl.Resolver{}).Host(r); got != "bot.example.com" {
		t.Errorf("Host: %q", got)
	}
	if got := (publicurl.Resolver{TrustForwarded: true}).Host(r); got != "proxied.example.com" {
		t.Errorf("Host behind a trusted proxy: %q", got)
	}
	r = httptest.NewRequest("GET", "http://127.0.0.1:8080/", nil)
	if got := (publicurl.Resolver{TrustForwarded: true}).Host(r); got != "" {
		t.Errorf("an IP address: %q", got)
	}
}
