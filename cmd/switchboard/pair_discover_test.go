package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// exposedStub is a server shaped like a2a-exposed: its A2A endpoint is at
// /a2a, its issuer the origin, whose RFC 8414 metadata names the device
// flow's endpoints at the root. The first poll is answered slow_down; the
// ones after, a token once they keep the raised interval.
type exposedStub struct {
	mu       sync.Mutex
	polls    []time.Time
	metadata func(base string) map[string]string
}

func (s *exposedStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		_ = json.NewEncoder(w).Encode(s.metadata(base))
	case "/oauth/device_authorization":
		_ = json.NewEncoder(w).Encode(map[string]any{"device_code": "dev-1", "user_code": "WDJB-4827",
			"verification_uri": base + "/device", "expires_in": 600, "interval": 1})
	case "/oauth/token":
		s.mu.Lock()
		s.polls = append(s.polls, time.Now())
		n := len(s.polls)
		s.mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"slow_down","error_description":"interval is now 6 s"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "a2aow_token", "token_type": "Bearer", "peer_label": "Barry"})
	default:
		http.NotFound(w, r)
	}
}

// TestPairDiscoversTheEndpoints: switchboard pair given an address below
// its issuer (a2a-exposed's /a2a) finds the device flow's endpoints in the
// origin's RFC 8414 metadata, obeys slow_down (the next poll waits 5 s
// more), and stores the token; metadata that names endpoints on another
// origin is refused.
func TestPairDiscoversTheEndpoints(t *testing.T) {
	stub := &exposedStub{metadata: func(base string) map[string]string {
		return map[string]string{"issuer": base, "device_authorization_endpoint": base + "/oauth/device_authorization", "token_endpoint": base + "/oauth/token"}
	}}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	conf := t.TempDir()
	var out strings.Builder
	err := run(t.Context(), []string{"--config-dir", conf, "pair", srv.URL + "/a2a", "--alias", "exposed", "--allow-private"}, &out)
	if err != nil {
		t.Fatalf("pair: %v\n%s", err, out.String())
	}
	stub.mu.Lock()
	polls := stub.polls
	stub.mu.Unlock()
	if len(polls) != 2 || polls[1].Sub(polls[0]) < 5*time.Second {
		t.Fatalf("polls at %v: want two, the second at least 5 s after the slow_down", polls)
	}
	cfg, err := loadPeers(conf)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Peers["exposed"]; p == nil || p.Token != "a2aow_token" || p.URL != srv.URL+"/a2a" || strings.Contains(out.String(), "a2aow_token") {
		t.Fatalf("stored %+v; printed:\n%s", p, out.String())
	}
	// The hint is a command that runs as printed (--text is required; no
	// <placeholder> that a shell would read as a redirection).
	if hint := "send with: switchboard send exposed --text 'hello' --agent YOUR_AGENT_HANDLE\n"; !strings.Contains(out.String(), hint) {
		t.Fatalf("the hint: %s", out.String())
	}

	elsewhere := httptest.NewServer(&exposedStub{metadata: func(string) map[string]string {
		return map[string]string{"device_authorization_endpoint": "http://127.0.0.2:9/oauth/device_authorization", "token_endpoint": "http://127.0.0.2:9/oauth/token"}
	}})
	defer elsewhere.Close()
	err = run(t.Context(), []string{"--config-dir", conf, "pair", elsewhere.URL + "/a2a", "--alias", "elsewhere", "--allow-private"}, &out)
	if err == nil || !strings.Contains(err.Error(), "off "+elsewhere.URL) {
		t.Fatalf("metadata naming another origin: %v", err)
	}

	// A server that does not answer ends the search at the first place.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	err = run(t.Context(), []string{"--config-dir", conf, "pair", gone.URL + "/a/x/y", "--alias", "gone", "--allow-private"}, &out)
	if err == nil || !strings.Contains(err.Error(), "find where "+gone.URL+"/a/x/y takes pairing requests") {
		t.Fatalf("an address that does not answer: %v", err)
	}
}
