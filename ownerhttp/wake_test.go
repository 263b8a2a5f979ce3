package ownerhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestWakeOwnerAPI(t *testing.T) {
	h := facetest.New(t, facetest.WithWakes(t, true))
	var got http.Header
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(202)
		_, _ = io.WriteString(w, "woken "+strings.Repeat("x", 2000))
	}))
	defer recv.Close()
	g := h.Agent("sleeper")
	path := "/agents/sleeper/wake"

	if r := h.Owner("GET", path, h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("show before set: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("POST", path+"/test", h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("test before set: %d %s", r.Status, r.Body)
	}
	key, secret := "sk-wake-key-0123456789", "hmac-secret-0123456789"
	r := h.Owner("PUT", path, h.OperatorToken, map[string]any{"url": recv.URL + "/hooks/abcdefghijklmnopqrstuvwxyz?token=abc",
		"key": key, "hmac_secret": secret, "preset": "claude-code"})
	if r.Status != 200 {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	show := h.Owner("GET", path, h.OperatorToken, nil)
	if show.Status != 200 || strings.Contains(string(show.Body), key) || strings.Contains(string(show.Body), secret) ||
		strings.Contains(string(show.Body), "abcdefghijklmnop") || strings.Contains(string(show.Body), "token=abc") {
		t.Fatalf("show leaks a secret or fails: %d %s", show.Status, show.Body)
	}
	if show.JSON["preset"] != "claude-code" || show.JSON["debounce_seconds"] != 20.0 || show.JSON["max_per_hour"] != 25.0 ||
		!strings.HasPrefix(show.JSON["key"].(string), "(set, sha256:") {
		t.Fatalf("show: %s", show.Body)
	}
	// A later set changes only what it names; the key stays.
	if r := h.Owner("PUT", path, h.OperatorToken, map[string]any{"debounce_seconds": 3, "max_per_hour": 0}); r.Status != 200 ||
		r.JSON["key"] != show.JSON["key"] || r.JSON["debounce_seconds"] != 3.0 || r.JSON["max_per_hour"] != 0.0 {
		t.Fatalf("partial set: %d %s", r.Status, r.Body)
	}
	for _, bad := range []map[string]any{
		{"preset": "nope"}, {"url": "ftp://x.example/"}, {"debounce_seconds": -1}, {"max_per_hour": -2},
		{"preset": "generic", "body_template": "{\"a\":{{from}}}"}, {"key_header": "Bad Header"}, {"unknown": 1},
	} {
		if r := h.Owner("PUT", path, h.OperatorToken, bad); r.Status != 400 {
			t.Errorf("set %v: %d %s", bad, r.Status, r.Body)
		}
	}

	test := h.Owner("POST", path+"/test", h.OperatorToken, nil)
	if test.Status != 200 || test.JSON["status"] != 202.0 || test.JSON["ok"] != true || len(test.JSON["body"].(string)) > 600 ||
		!strings.HasPrefix(test.JSON["body"].(string), "woken") {
		t.Fatalf("test: %d %s", test.Status, test.Body)
	}
	if got.Get("Authorization") != "Bearer "+key || got.Get("Anthropic-Version") == "" {
		t.Fatalf("test wake headers %v", got)
	}

	// Another owner sees nothing.
	_, other := h.Account("mallory")
	for _, m := range []string{"GET", "DELETE"} {
		if r := h.Owner(m, path, other, nil); r.Status != 404 {
			t.Fatalf("%s by another owner: %d", m, r.Status)
		}
	}
	if r := h.Owner("POST", path+"/test", other, nil); r.Status != 404 {
		t.Fatalf("test by another owner: %d", r.Status)
	}
	if r := h.Owner("DELETE", path, h.OperatorToken, nil); r.Status != 204 {
		t.Fatalf("unset: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("DELETE", path, h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("unset twice: %d", r.Status)
	}
	_ = g
}

// TestWakeTestRefusedByDefault: with the default guard a test wake to a
// loopback receiver is refused, and the owner is told why.
func TestWakeTestRefusedByDefault(t *testing.T) {
	h := facetest.New(t, facetest.WithWakes(t, false))
	hit := false
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer recv.Close()
	h.Agent("sleeper")
	if r := h.Owner("PUT", "/agents/sleeper/wake", h.OperatorToken, map[string]any{"url": recv.URL}); r.Status != 200 {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	r := h.Owner("POST", "/agents/sleeper/wake/test", h.OperatorToken, nil)
	if r.Status != 400 || !strings.Contains(string(r.Body), "network guard") || hit {
		t.Fatalf("test wake to loopback: %d %s (reached: %v)", r.Status, r.Body, hit)
	}
}

// TestWakeSetRequiresHTTPS: with the guard closed (the default) a wake url
// over plain http is refused when it is saved, with a clear error, and
// nothing is saved; https is accepted.
func TestWakeSetRequiresHTTPS(t *testing.T) {
	h := facetest.New(t, facetest.WithWakes(t, false))
	h.Agent("sleeper")
	path := "/agents/sleeper/wake"
	r := h.Owner("PUT", path, h.OperatorToken, map[string]any{"url": "http://wake.example/hook", "key": "k-0123456789"})
	if r.Status != 400 || !strings.Contains(string(r.Body), "must be https") {
		t.Fatalf("set over plain http: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", path, h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("a refused configuration was saved: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("PUT", path, h.OperatorToken, map[string]any{"url": "https://wake.example/hook"}); r.Status != 200 {
		t.Fatalf("set over https: %d %s", r.Status, r.Body)
	}
	// A later change to plain http is refused too, and the https url stays.
	if r := h.Owner("PUT", path, h.OperatorToken, map[string]any{"url": "http://wake.example/hook"}); r.Status != 400 {
		t.Fatalf("change to plain http: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", path, h.OperatorToken, nil); r.Status != 200 || !strings.HasPrefix(r.JSON["url"].(string), "https://") {
		t.Fatalf("after a refused change: %d %s", r.Status, r.Body)
	}
}
