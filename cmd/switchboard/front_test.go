package main

import (
	"crypto/x509"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

// frontMain runs a server whose fronts trust the upstream's test
// certificate and may reach loopback.
func frontMain(t *testing.T, up *upstreamAgent) *Main {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(up.srv.Certificate())
	return MustRunMain(t, t.TempDir(), "", func(c *Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.FrontRootCAs = pool
	})
}

// createFront creates a front agent for the upstream at url and returns a
// peer token of it.
func createFront(t *testing.T, m *Main, handle, url string, args ...string) string {
	t.Helper()
	out := cli(t, m, append([]string{"agent", "create", handle, "--mode", "front", "--upstream", url}, args...)...)
	if !strings.Contains(out, "upstream:   "+url) {
		t.Fatalf("agent create said %q", out)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", handle, "bob")), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

// TestFront puts an a2a-go server behind a front, over https, in each
// version and both ways of answering: the peer's work reaches it with the
// owner's credentials and the peer's label, never the peer's token, and a
// follow-up reaches the same task there.
func TestFront(t *testing.T) {
	tests := map[string]struct {
		version   string
		streaming bool
	}{
		"V1Streaming":  {"1.0", true},
		"V1Blocking":   {"1.0", false},
		"V03Blocking":  {"0.3", false},
		"V03Streaming": {"0.3", true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, tt.version, tt.streaming, upstreamOptions{tls: true, token: "owner-upstream-secret"})
			m := frontMain(t, up)
			peerToken := createFront(t, m, "fronted", up.srv.URL+"/invoke")
			cmd := []string{"front", "credentials", "fronted", "--bearer-stdin", "--header", "CF-Access-Client-Id=abc"}
			if out := cliStdin(t, m, "owner-upstream-secret\n", cmd...); !strings.Contains(out, "bearer set, headers [CF-Access-Client-Id]") {
				t.Fatalf("front credentials said %q", out)
			}

			task := peerSend(t, m, "fronted", peerToken, "m1", "hello", "", true)
			if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("answer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
			}
			task = peerSend(t, m, "fronted", peerToken, "m2", "ask", "", true)
			if got, want := task.Status.State, "TASK_STATE_INPUT_REQUIRED"; got != want {
				t.Fatalf("state: got %s, want %s (%s)", got, want, task.reason())
			}
			task = peerSend(t, m, "fronted", peerToken, "m3", "blue", task.ID, true)
			if got, want := task.answer(), "upstream: you chose blue"; got != want {
				t.Fatalf("follow-up answer: got %q, want %q (%s %s)", got, want, task.Status.State, task.reason())
			}

			up.mu.Lock()
			defer up.mu.Unlock()
			if !up.followUp {
				t.Fatal("the follow-up did not reach the upstream task")
			}
			for _, h := range up.headers {
				if got := h.Get("Authorization"); got != "Bearer owner-upstream-secret" {
					t.Fatalf("a request upstream carried Authorization %q, want the owner's bearer", got)
				}
				if h.Get("CF-Access-Client-Id") != "abc" {
					t.Fatalf("a request upstream lacks the credential header: %v", h)
				}
			}
			sawPeer := false
			for _, h := range up.headers {
				sawPeer = sawPeer || h.Get("X-A2A-Peer") == "bob"
			}
			if !sawPeer {
				t.Fatal("no request upstream named the peer in X-A2A-Peer")
			}
		})
	}
}

// TestFrontUpstreamRefusesCredentials: an upstream that answers 401 is
// a generic failure for the peer and a classified one for the owner.
func TestFrontUpstreamRefusesCredentials(t *testing.T) {
	up := newUpstreamAgent(t, "1.0", false, upstreamOptions{tls: true, token: "the-right-one"})
	m := frontMain(t, up)
	peerToken := createFront(t, m, "fronted", up.srv.URL+"/invoke")
	cliStdin(t, m, "a-wrong-one\n", "front", "credentials", "fronted", "--bearer-stdin")

	task := peerSend(t, m, "fronted", peerToken, "m1", "hello", "", true)
	if task.Status.State != "TASK_STATE_FAILED" {
		t.Fatalf("state %s, want failed", task.Status.State)
	}
	if got := task.reason(); strings.Contains(got, "401") || !strings.Contains(got, "misconfigured") {
		t.Fatalf("the peer was told %q: want the generic misconfigured message, no upstream status", got)
	}
	var st struct {
		LastFailure *struct {
			Reason string `json:"reason"`
			Status int    `json:"status"`
			Peer   string `json:"peer"`
		} `json:"last_failure"`
		HasBearer bool `json:"has_bearer"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "front", "status", "fronted")), &st); err != nil {
		t.Fatal(err)
	}
	if st.LastFailure == nil || st.LastFailure.Reason != "upstream_auth_rejected" || st.LastFailure.Status != 401 || st.LastFailure.Peer != "bob" || !st.HasBearer {
		t.Fatalf("status: %+v %+v", st, st.LastFailure)
	}
	out, err := cliErr(m, "front", "verify", "fronted")
	if err == nil || !strings.Contains(err.Error(), "upstream_auth_rejected") {
		t.Fatalf("verify with the wrong bearer: %q, %v", out, err)
	}
	cliStdin(t, m, "the-right-one\n", "front", "credentials", "fronted", "--bearer-stdin")
	if out := cli(t, m, "front", "verify", "fronted"); !strings.Contains(out, "reachable") {
		t.Fatalf("verify with the right bearer: %q", out)
	}
}
