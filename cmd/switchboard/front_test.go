package main

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// frontMain runs a server whose fronts trust the upstream's test
// certificate and may reach loopback, with the changes more make to its
// configuration.
func frontMain(t *testing.T, up *upstreamAgent, more ...func(*server.Config)) *server.Server {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(up.srv.Certificate())
	return MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.FrontRootCAs = pool
		for _, f := range more {
			f(c)
		}
	})
}

// createFront creates a front agent for the upstream at url and returns a
// peer token of it.
func createFront(t *testing.T, m *server.Server, handle, url string, args ...string) string {
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

	// A blocking call: HTTP 502, -32603, a generic message.
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/fronted", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rpc struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Error == nil || resp.StatusCode != http.StatusBadGateway || rpc.Error.Code != -32603 {
		t.Fatalf("blocking send to a refusing upstream: HTTP %d %s", resp.StatusCode, raw)
	}
	if strings.Contains(rpc.Error.Message, "401") || !strings.Contains(rpc.Error.Message, "misconfigured") {
		t.Fatalf("the peer was told %q: want the generic misconfigured message, no upstream status", rpc.Error.Message)
	}
	// Without blocking, the task fails with the same generic message.
	task := peerSend(t, m, "fronted", peerToken, "m2", "hello", "", false)
	task = waitTask(t, m, "fronted", peerToken, task.ID, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_FAILED" })
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

// TestFrontBeyondTheUpstream: what a front offers whatever its upstream
// does, because peers talk to Switchboard's own tasks: a 0.3 peer reaches
// a 1.0 upstream, a stream passes the upstream's events through, ListTasks
// lists the caller's own tasks, and another peer sees none of them.
func TestFrontBeyondTheUpstream(t *testing.T) {
	up := newUpstreamAgent(t, "1.0", true, upstreamOptions{tls: true})
	m := frontMain(t, up)
	bob := createFront(t, m, "fronted", up.srv.URL+"/invoke")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "fronted", "carol")), &tok); err != nil {
		t.Fatal(err)
	}
	carol := tok.Token

	// A 0.3 peer, a 1.0 upstream.
	res := peerCallV03(t, m, "fronted", bob, "message/send", v03Message("m1", "bridged", "", true))
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), "upstream: bridged") || res["kind"] != "task" {
		t.Fatalf("0.3 answer: %s", raw)
	}
	bobTask, _ := res["id"].(string)

	// A stream, event by event.
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"streamed"}]}}}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/fronted", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	sawArtifact, sawCompleted := false, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && !sawCompleted {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		events++
		sawArtifact = sawArtifact || strings.Contains(line, "upstream: streamed")
		sawCompleted = strings.Contains(line, "TASK_STATE_COMPLETED")
	}
	resp.Body.Close()
	if !sawArtifact || !sawCompleted || events < 3 {
		t.Fatalf("stream: %d events, artifact %v, completed %v", events, sawArtifact, sawCompleted)
	}

	// ListTasks: the caller's own tasks, from Switchboard's record.
	list := func(token string) []string {
		body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
		req, _ := http.NewRequest("POST", m.URL()+"/a/fronted", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			Result struct {
				Tasks []struct {
					ID string `json:"id"`
				} `json:"tasks"`
			} `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tk := range a.Result.Tasks {
			ids = append(ids, tk.ID)
		}
		return ids
	}
	if got := list(bob); len(got) != 2 || !slices.Contains(got, bobTask) {
		t.Fatalf("bob lists %q, want his two tasks with %s", got, bobTask)
	}
	if got := list(carol); len(got) != 0 {
		t.Fatalf("carol lists %q, want none", got)
	}
	// Another peer cannot read bob's task, nor continue it.
	body = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + bobTask + `"}}`
	req, _ = http.NewRequest("POST", m.URL()+"/a/fronted", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+carol)
	req.Header.Set("A2A-Version", "1.0")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "-32001") {
		t.Fatalf("carol's GetTask of bob's task: %s", b)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, h := range up.headers {
		if h.Get("X-A2A-Peer") == "carol" {
			t.Fatal("carol's refused request reached the upstream")
		}
	}
}

// TestFrontPushes: a peer's push configuration on a front's task is kept
// by Switchboard, which sends the pushes itself; the upstream is never
// given the peer's URL.
func TestFrontPushes(t *testing.T) {
	var mu sync.Mutex
	var pushes []string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		pushes = append(pushes, r.Header.Get("X-A2A-Notification-Token")+" "+string(b))
		mu.Unlock()
	}))
	defer rc.Close()
	up := newUpstreamAgent(t, "1.0", false, upstreamOptions{tls: true})
	m := frontMain(t, up)
	bob := createFront(t, m, "fronted", up.srv.URL+"/invoke")
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"pushed"}]},
		"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"` + rc.URL + `/hook","token":"bob-push-token-abcdefghijkl"}}}}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/fronted", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	testwait.ForErr(t, "the completed task pushed", func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range pushes {
			if strings.HasPrefix(p, "bob-push-token-abcdefghijkl ") && strings.Contains(p, "TASK_STATE_COMPLETED") && strings.Contains(p, "upstream: pushed") {
				return nil
			}
		}
		return fmt.Errorf("%d pushes, none of the completed task", len(pushes))
	})
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, h := range up.headers {
		if strings.Contains(fmt.Sprint(h), rc.URL) {
			t.Fatal("the peer's push URL reached the upstream")
		}
	}
}

// TestFrontCard: the address's card is the upstream's, rewritten: its
// name and skills, our interfaces in both versions and our security, and
// nothing of the upstream's (private) URL or host; front status reads the
// card and finds no leak.
func TestFrontCard(t *testing.T) {
	up := newUpstreamAgent(t, "1.0", true, upstreamOptions{tls: true})
	m := frontMain(t, up)
	createFront(t, m, "fronted", up.srv.URL+"/invoke")
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		resp, err := http.Get(m.URL() + "/a/fronted" + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		card := string(raw)
		host := strings.TrimPrefix(up.srv.URL, "https://")
		if strings.Contains(card, host) || strings.Contains(card, "/invoke") {
			t.Fatalf("%s leaks the upstream: %s", path, card)
		}
		for _, want := range []string{`"name":"Upstream 1.0"`, `"id":"echo"`, m.URL() + "/a/fronted", `"bearer"`} {
			if !strings.Contains(card, want) {
				t.Fatalf("%s lacks %s: %s", path, want, card)
			}
		}
	}
	var st struct {
		Card             string   `json:"card"`
		UpstreamVersions []string `json:"upstream_versions"`
		Streaming        bool     `json:"upstream_streaming"`
		Leaks            []string `json:"public_card_leaks"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "front", "status", "fronted")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Card != "ok" || !slices.Equal(st.UpstreamVersions, []string{"1.0"}) || !st.Streaming || len(st.Leaks) != 0 {
		t.Fatalf("status: %+v", st)
	}
	if out := cli(t, m, "front", "status", "fronted"); !strings.Contains(out, "public card leaks  none") {
		t.Fatalf("front status said:\n%s", out)
	}
}
