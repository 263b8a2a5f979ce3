package certs_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-dev/switchboard/certs"
)

// TestRedirect covers the plain listener's handler on its own, with the
// client addresses a real listener would give it (a test of the whole
// server can only be a loopback client): a client from elsewhere is
// redirected to https with 308, same host, path and query, the HTTPS port
// named unless it is 443; a loopback client (IPv4 or IPv6) is served as
// it is; an ACME challenge is answered before anything else; a request
// with no usable host is refused.
func TestRedirect(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	challenge := func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/.well-known/acme-challenge/tok" {
			w.WriteHeader(http.StatusOK)
			return true
		}
		return false
	}
	for name, tc := range map[string]struct {
		remote, host, target string
		port                 int
		status               int
		location             string
	}{
		"Elsewhere":        {"203.0.113.5:4242", "agents.example.com", "/a/bot/.well-known/agent-card.json?x=1&y=%2F", 443, 308, "https://agents.example.com/a/bot/.well-known/agent-card.json?x=1&y=%2F"},
		"ElsewhereIPv6":    {"[2001:db8::5]:4242", "agents.example.com:80", "/", 443, 308, "https://agents.example.com/"},
		"OtherHTTPSPort":   {"203.0.113.5:4242", "agents.example.com:8080", "/p", 8443, 308, "https://agents.example.com:8443/p"},
		"ByAddress":        {"203.0.113.5:4242", "198.51.100.7", "/p", 443, 308, "https://198.51.100.7/p"},
		"ByIPv6Address":    {"203.0.113.5:4242", "[2001:db8::7]:80", "/p", 8443, 308, "https://[2001:db8::7]:8443/p"},
		"Loopback":         {"127.0.0.1:4242", "agents.example.com", "/healthz", 443, http.StatusTeapot, ""},
		"LoopbackIPv6":     {"[::1]:4242", "localhost:8080", "/healthz", 443, http.StatusTeapot, ""},
		"OtherLoopback":    {"127.0.0.2:4242", "agents.example.com", "/", 443, http.StatusTeapot, ""},
		"Challenge":        {"203.0.113.5:4242", "agents.example.com", "/.well-known/acme-challenge/tok", 443, http.StatusOK, ""},
		"OtherChallenge":   {"203.0.113.5:4242", "agents.example.com", "/.well-known/acme-challenge/other", 443, 308, "https://agents.example.com/.well-known/acme-challenge/other"},
		"HostWithSlash":    {"203.0.113.5:4242", "evil.example/x", "/", 443, http.StatusBadRequest, ""},
		"HostWithUserinfo": {"203.0.113.5:4242", "a@evil.example", "/", 443, http.StatusBadRequest, ""},
		"NoHost":           {"203.0.113.5:4242", "", "/", 443, http.StatusBadRequest, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://placeholder"+tc.target, nil)
			r.Host, r.RemoteAddr = tc.host, tc.remote
			w := httptest.NewRecorder()
			certs.Redirect(app, tc.port, challenge).ServeHTTP(w, r)
			if w.Code != tc.status || w.Header().Get("Location") != tc.location {
				t.Fatalf("%d Location %q; want %d %q", w.Code, w.Header().Get("Location"), tc.status, tc.location)
			}
			if w.Header().Get("Strict-Transport-Security") != "" {
				t.Fatal("HSTS over plain HTTP")
			}
		})
	}
}

// TestHSTS: Strict-Transport-Security, a year without includeSubDomains
// or preload, on responses to requests over TLS only.
func TestHSTS(t *testing.T) {
	h := certs.HSTS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Fatalf("over TLS: %q", got)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://x/", nil))
	if got := w.Header().Get("Strict-Transport-Security"); got != "" {
		t.Fatalf("over plain HTTP: %q", got)
	}
}
