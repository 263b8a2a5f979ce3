package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/wake"
)

// withWakes serves the wake routes, sending through a guard that reaches
// 127.0.0.1 only when loopback is set.
func withWakes(t testing.TB, loopback bool) harnessOption {
	return withDeps(func(d *assembly.APIDeps) {
		bus := membus.New()
		t.Cleanup(func() { _ = bus.Close() })
		opts := netguard.Options{}
		if loopback {
			opts.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		}
		store := d.Agents.(switchboard.Store)
		d.Wakes = wake.NewService(store, store, bus, wake.New(opts), slog.New(slog.NewTextHandler(io.Discard, nil)))
		d.Wakes.CheckTemplate = wake.CheckTemplate
		d.Wakes.AllowHTTP = opts.AllowsPlainHTTP()
	})
}

func TestWakeOwnerAPI(t *testing.T) {
	h := newHarness(t, withWakes(t, true))
	var got http.Header
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(202)
		_, _ = io.WriteString(w, "woken "+strings.Repeat("x", 2000))
	}))
	defer recv.Close()
	g := h.agent("sleeper")
	path := "/agents/sleeper/wake"

	if r := h.owner("GET", path, h.operatorToken, nil); r.status != 404 {
		t.Fatalf("show before set: %d %s", r.status, r.body)
	}
	if r := h.owner("POST", path+"/test", h.operatorToken, nil); r.status != 404 {
		t.Fatalf("test before set: %d %s", r.status, r.body)
	}
	key, secret := "sk-wake-key-0123456789", "hmac-secret-0123456789"
	r := h.owner("PUT", path, h.operatorToken, map[string]any{"url": recv.URL + "/hooks/abcdefghijklmnopqrstuvwxyz?token=abc",
		"key": key, "hmac_secret": secret, "preset": "claude-code"})
	if r.status != 200 {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	show := h.owner("GET", path, h.operatorToken, nil)
	if show.status != 200 || strings.Contains(string(show.body), key) || strings.Contains(string(show.body), secret) ||
		strings.Contains(string(show.body), "abcdefghijklmnop") || strings.Contains(string(show.body), "token=abc") {
		t.Fatalf("show leaks a secret or fails: %d %s", show.status, show.body)
	}
	if show.json["preset"] != "claude-code" || show.json["debounce_seconds"] != 20.0 || show.json["max_per_hour"] != 25.0 ||
		!strings.HasPrefix(show.json["key"].(string), "(set, sha256:") {
		t.Fatalf("show: %s", show.body)
	}
	// A later set changes only what it names; the key stays.
	if r := h.owner("PUT", path, h.operatorToken, map[string]any{"debounce_seconds": 3, "max_per_hour": 0}); r.status != 200 ||
		r.json["key"] != show.json["key"] || r.json["debounce_seconds"] != 3.0 || r.json["max_per_hour"] != 0.0 {
		t.Fatalf("partial set: %d %s", r.status, r.body)
	}
	for _, bad := range []map[string]any{
		{"preset": "nope"}, {"url": "ftp://x.example/"}, {"debounce_seconds": -1}, {"max_per_hour": -2},
		{"preset": "generic", "body_template": "{\"a\":{{from}}}"}, {"key_header": "Bad Header"}, {"unknown": 1},
	} {
		if r := h.owner("PUT", path, h.operatorToken, bad); r.status != 400 {
			t.Errorf("set %v: %d %s", bad, r.status, r.body)
		}
	}

	test := h.owner("POST", path+"/test", h.operatorToken, nil)
	if test.status != 200 || test.json["status"] != 202.0 || test.json["ok"] != true || len(test.json["body"].(string)) > 600 ||
		!strings.HasPrefix(test.json["body"].(string), "woken") {
		t.Fatalf("test: %d %s", test.status, test.body)
	}
	if got.Get("Authorization") != "Bearer "+key || got.Get("Anthropic-Version") == "" {
		t.Fatalf("test wake headers %v", got)
	}

	// Another owner sees nothing.
	_, other := h.account("mallory")
	for _, m := range []string{"GET", "DELETE"} {
		if r := h.owner(m, path, other, nil); r.status != 404 {
			t.Fatalf("%s by another owner: %d", m, r.status)
		}
	}
	if r := h.owner("POST", path+"/test", other, nil); r.status != 404 {
		t.Fatalf("test by another owner: %d", r.status)
	}
	if r := h.owner("DELETE", path, h.operatorToken, nil); r.status != 204 {
		t.Fatalf("unset: %d %s", r.status, r.body)
	}
	if r := h.owner("DELETE", path, h.operatorToken, nil); r.status != 404 {
		t.Fatalf("unset twice: %d", r.status)
	}
	_ = g
}

// TestWakeTestRefusedByDefault: with the default guard a test wake to a
// loopback receiver is refused, and the owner is told why.
func TestWakeTestRefusedByDefault(t *testing.T) {
	h := newHarness(t, withWakes(t, false))
	hit := false
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer recv.Close()
	h.agent("sleeper")
	if r := h.owner("PUT", "/agents/sleeper/wake", h.operatorToken, map[string]any{"url": recv.URL}); r.status != 200 {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	r := h.owner("POST", "/agents/sleeper/wake/test", h.operatorToken, nil)
	if r.status != 400 || !strings.Contains(string(r.body), "network guard") || hit {
		t.Fatalf("test wake to loopback: %d %s (reached: %v)", r.status, r.body, hit)
	}
}

// TestWakeSetRequiresHTTPS: with the guard closed (the default) a wake url
// over plain http is refused when it is saved, with a clear error, and
// nothing is saved; https is accepted.
func TestWakeSetRequiresHTTPS(t *testing.T) {
	h := newHarness(t, withWakes(t, false))
	h.agent("sleeper")
	path := "/agents/sleeper/wake"
	r := h.owner("PUT", path, h.operatorToken, map[string]any{"url": "http://wake.example/hook", "key": "k-0123456789"})
	if r.status != 400 || !strings.Contains(string(r.body), "must be https") {
		t.Fatalf("set over plain http: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", path, h.operatorToken, nil); r.status != 404 {
		t.Fatalf("a refused configuration was saved: %d %s", r.status, r.body)
	}
	if r := h.owner("PUT", path, h.operatorToken, map[string]any{"url": "https://wake.example/hook"}); r.status != 200 {
		t.Fatalf("set over https: %d %s", r.status, r.body)
	}
	// A later change to plain http is refused too, and the https url stays.
	if r := h.owner("PUT", path, h.operatorToken, map[string]any{"url": "http://wake.example/hook"}); r.status != 400 {
		t.Fatalf("change to plain http: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", path, h.operatorToken, nil); r.status != 200 || !strings.HasPrefix(r.json["url"].(string), "https://") {
		t.Fatalf("after a refused change: %d %s", r.status, r.body)
	}
}
