package publicurl_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
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
		handle, ok := publicurl.HandleAt(c.base, c.to)
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
		handle, ok := c.urls.Handle(r, c.to)
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
		handle, ok := publicurl.HandleAt(base, to)
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
			if _, ok := publicurl.HandleAt(base, u.String()); ok {
				t.Fatalf("%q accepted on base %q", u.String(), base)
			}
		}
		if !strings.ContainsAny(base, "?#") {
			for _, addr := range []string{strings.TrimRight(base, "/") + "/a/" + handle, strings.TrimRight(base, "/") + "/a/" + handle + "/"} {
				if h, ok := publicurl.HandleAt(base, addr); !ok || h != handle {
					t.Fatalf("%q accepted as %q, but its address %q reads as %q, %t", to, handle, addr, h, ok)
				}
			}
		}
	})
}
