package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/server"
)

// echoAgent is a real a2a-go v2 agent: it takes a message, works for a
// moment, and completes with "done: <text>", or asks for input when the
// text contains "question".
type echoAgent struct {
	delay time.Duration
	calls atomic.Int32
	// replayTask: the server answers a follow-up at once with the task as
	// it was (see replayFollowUps).
	replayTask bool
}

func (e *echoAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e.calls.Add(1)
		if strings.Contains(switchboard.MessageText(ec.Message), "quick") {
			// Answered at once with a message: no task at all.
			reply := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("quick answer"))
			reply.ContextID = ec.ContextID
			yield(reply, nil)
			return
		}
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-time.After(e.delay):
		case <-ctx.Done():
			return
		}
		text := switchboard.MessageText(ec.Message)
		if strings.Contains(text, "question") {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("which one?"))), nil)
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("echo: "+text)), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("done: "+text))), nil)
	}
}

func (e *echoAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

const remoteToken = "remote-secret-token"

// startA2AGo starts a real a2a-go v2 server on loopback speaking version
// ("1.0": the JSON-RPC handler and a 1.0 card at agent-card.json; "0.3":
// the v0.3 compat handler and only a 0.3 card at agent.json). Its push
// sender may reach loopback, so that pushes come back to the test's
// Switchboard server. Calls need the bearer token remoteToken.
func startA2AGo(t *testing.T, version string, agent *echoAgent) *httptest.Server {
	t.Helper()
	sender := push.NewHTTPPushSender(&push.HTTPSenderConfig{AllowPrivateNetworks: true, Timeout: 5 * time.Second})
	handler := a2asrv.NewHandler(agent, a2asrv.WithPushNotifications(push.NewInMemoryStore(), sender))
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	srv.Start()
	t.Cleanup(srv.Close)
	card := &a2a.AgentCard{
		Name: "echo " + version, Description: "echoes", Version: "1.0.0",
		Capabilities:       a2a.AgentCapabilities{PushNotifications: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echo", Tags: []string{"echo"}}},
		SupportedInterfaces: []*a2a.AgentInterface{{URL: srv.URL + "/rpc", ProtocolBinding: a2a.TransportProtocolJSONRPC,
			ProtocolVersion: a2a.ProtocolVersion(version)}},
	}
	var rpc http.Handler
	switch version {
	case "1.0":
		rpc = a2asrv.NewJSONRPCHandler(handler)
		mux.Handle("GET /.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	case "0.3":
		rpc = a2av0.NewJSONRPCHandler(handler)
		legacy, err := json.Marshal(a2av0.FromV1AgentCard(card))
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("GET /.well-known/agent.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(legacy)
		})
	}
	if agent.replayTask {
		rpc = replayFollowUps(handler, version, rpc)
	}
	mux.Handle("/rpc", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+remoteToken {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		rpc.ServeHTTP(w, r)
	}))
	return srv
}

// replayFollowUps wraps rpc, the JSON-RPC handler of the a2a-go handler
// h, so that a follow-up message (one naming a task) is answered at once
// with the task as it was before the agent read the message, while the
// message goes on to the agent. So answer @a2a-js/sdk 1.x servers, whose
// executors must publish the task first, even on a follow-up, when the
// client asks to return immediately. (An a2a-go agent cannot: a2a-go ends
// an execution at a task event in input-required.)
func replayFollowUps(h a2asrv.RequestHandler, version string, rpc http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Message struct {
					TaskID string `json:"taskId"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		if (req.Method == "SendMessage" || req.Method == "message/send") && req.Params.Message.TaskID != "" {
			task, err := h.GetTask(r.Context(), &a2a.GetTaskRequest{ID: a2a.TaskID(req.Params.Message.TaskID)})
			if err == nil {
				fwd := r.Clone(context.WithoutCancel(r.Context()))
				fwd.Body = io.NopCloser(bytes.NewReader(body))
				go rpc.ServeHTTP(httptest.NewRecorder(), fwd)
				var result any = map[string]any{"task": task}
				if version == "0.3" {
					result = a2av0.FromV1Task(task)
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rpc.ServeHTTP(w, r)
	})
}

// cliIO runs the command line against m with stdin and returns stdout and
// stderr.
func cliIO(m *server.Server, stdin string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	full := append([]string{"--server", m.URL(), "--data", m.Config.DataDir}, args...)
	err := runIO(context.Background(), full, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// outboxRecord reads one outbound record through the CLI.
func outboxRecord(t *testing.T, m *server.Server, agent, id string) ownerapi.Outbound {
	t.Helper()
	var boxes []struct {
		Outbox []ownerapi.Outbound `json:"outbox"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "outbox", "--agent", agent)), &boxes); err != nil {
		t.Fatal(err)
	}
	for _, o := range boxes[0].Outbox {
		if o.ID == id {
			return o
		}
	}
	t.Fatalf("no outbox record %s", id)
	return ownerapi.Outbound{}
}

// sendJSON runs send with --json and returns the record.
func sendJSON(t *testing.T, m *server.Server, args ...string) ownerapi.Outbound {
	t.Helper()
	var rec ownerapi.Outbound
	out := cli(t, m, append([]string{"--json", "send"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("send output: %v\n%s", err, out)
	}
	return rec
}

func TestSendToA2AGo(t *testing.T) {
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			agent := &echoAgent{delay: 50 * time.Millisecond}
			remote := startA2AGo(t, version, agent)
			m := MustRunMain(t, t.TempDir(), "")
			cli(t, m, "agent", "create", "alice", "--mode", "inbox")
			t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
			t.Setenv("BOB_TOKEN", remoteToken)

			// The network guard refuses loopback by default, before anything is sent.
			_, err := cliErr(m, "send", remote.URL, "--agent", "alice", "--text", "hi", "--token-env", "BOB_TOKEN")
			if err == nil || !strings.Contains(err.Error(), "--allow-private") || agent.calls.Load() != 0 {
				t.Fatalf("loopback target: %v (calls %d)", err, agent.calls.Load())
			}

			cli(t, m, "peers", "add", "bob", remote.URL, "--token-env", "BOB_TOKEN", "--allow-private")

			// A plain send returns at once; poll brings the answer.
			rec := sendJSON(t, m, "bob", "--agent", "alice", "--text", "hello", "--context", "ctx-"+version)
			if rec.TaskID == "" || rec.Protocol != version || rec.ContextID != "ctx-"+version || rec.Target != "bob" ||
				!strings.HasPrefix(rec.Endpoint, remote.URL) || rec.Push {
				t.Fatalf("send: %+v", rec)
			}
			testwait.For(t, "the remote task to finish", func() bool {
				out := cli(t, m, "poll", rec.ID)
				return strings.Contains(out, " completed\n")
			})
			out := cli(t, m, "poll", rec.ID)
			if !strings.Contains(out, "UNTRUSTED PEER MESSAGE >>>\n  | done: hello\n") || !strings.Contains(out, "(A2A "+version+"): task ") {
				t.Fatalf("poll: %s", out)
			}
			if got := outboxRecord(t, m, "alice", rec.ID); got.State != "completed" || got.Updates[len(got.Updates)-1].Source != "poll" {
				t.Fatalf("record after poll: %+v", got)
			}

			// --wait returns once the task needs input; --task answers it.
			q := sendJSON(t, m, "bob", "--agent", "alice", "--text", "a question", "--wait", "--timeout", "10s")
			if q.State != "input-required" || q.Updates[len(q.Updates)-1].Text != "which one?" {
				t.Fatalf("send --wait: %+v", q)
			}
			out = cli(t, m, "send", "bob", "--agent", "alice", "--text", "the first", "--task", q.TaskID, "--context", q.ContextID, "--wait", "--timeout", "10s")
			if !strings.Contains(out, "task "+q.TaskID) || !strings.Contains(out, " completed\n") || !strings.Contains(out, "  | done: the first") {
				t.Fatalf("send --task --wait: %s", out)
			}

			// --push: the remote a2a-go server pushes to alice's address.
			rec = sendJSON(t, m, "bob", "--agent", "alice", "--text", "push me", "--push", "--context", "ctx-"+version)
			if !rec.Push || rec.PushURL != m.URL()+"/a/alice/push" {
				t.Fatalf("send --push: %+v", rec)
			}
			testwait.For(t, "pushes to complete the record", func() bool {
				got := outboxRecord(t, m, "alice", rec.ID)
				for _, u := range got.Updates {
					if u.Source == "push" && u.State == string(a2a.TaskStateCompleted) {
						return got.State == "completed"
					}
				}
				return false
			})

			// An answer that is a message ends the exchange; there is nothing to poll.
			quick := sendJSON(t, m, "bob", "--agent", "alice", "--text", "a quick one")
			if quick.TaskID != "" || quick.State != "completed" || quick.Updates[0].Text != "quick answer" {
				t.Fatalf("message answer: %+v", quick)
			}
			if _, err := cliErr(m, "poll", quick.ID); err == nil || !strings.Contains(err.Error(), "nothing to poll") {
				t.Fatalf("poll of a message answer: %v", err)
			}

			// The outbox lists every send; history shows both directions.
			out = cli(t, m, "outbox", "--agent", "alice")
			if strings.Count(out, "alice → bob") != 5 || !strings.Contains(out, "UNTRUSTED PEER MESSAGE >>>\n  | done: push me") {
				t.Fatalf("outbox: %s", out)
			}
			out = cli(t, m, "history", "ctx-"+version, "--agent", "alice")
			for _, want := range []string{"alice sent to bob", "  | hello", "answer from bob", "UNTRUSTED PEER MESSAGE >>>\n  | done: push me"} {
				if !strings.Contains(out, want) {
					t.Fatalf("history lacks %q:\n%s", want, out)
				}
			}

			// A wrong token is refused and explained; the failure is recorded.
			t.Setenv("BOB_TOKEN", "wrong")
			_, err = cliErr(m, "send", "bob", "--agent", "alice", "--text", "x")
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("wrong token: %v", err)
			}
			if out := cli(t, m, "outbox", "--agent", "alice"); !strings.Contains(out, "failed") || !strings.Contains(out, "error:") {
				t.Fatalf("outbox after a failed send: %s", out)
			}
		})
	}
}

// TestSendWaitFollowUpReplayedTask: a server that answers a follow-up at
// once with the task as it was (still input-required, asking the question
// just answered) does not end send --task --wait: it waits for the agent's
// real answer. @a2a-js/sdk 1.x servers answer so (interop/run.sh).
func TestSendWaitFollowUpReplayedTask(t *testing.T) {
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			agent := &echoAgent{delay: 300 * time.Millisecond, replayTask: true}
			remote := startA2AGo(t, version, agent)
			m := MustRunMain(t, t.TempDir(), "")
			cli(t, m, "agent", "create", "alice", "--mode", "inbox")
			t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
			t.Setenv("SWITCHBOARD_PEER_TOKEN", remoteToken)
			send := func(args ...string) ownerapi.Outbound {
				return sendJSON(t, m, append([]string{remote.URL, "--agent", "alice", "--wait", "--timeout", "10s", "--allow-private"}, args...)...)
			}
			q := send("--text", "a question")
			if q.State != "input-required" || q.Updates[len(q.Updates)-1].Text != "which one?" {
				t.Fatalf("send --wait: %+v", q)
			}
			a := send("--text", "the first", "--task", q.TaskID, "--context", q.ContextID)
			if a.TaskID != q.TaskID || a.State != "completed" || a.Updates[0].State != string(a2a.TaskStateInputRequired) ||
				a.Updates[len(a.Updates)-1].Text != "done: the first" {
				t.Fatalf("send --task --wait answered at once with the replayed task: %+v", a)
			}

			// A new question after the replayed one is the agent's answer.
			q = send("--text", "a question")
			a = send("--text", "another question", "--task", q.TaskID, "--context", q.ContextID)
			if a.State != "input-required" || a.Updates[0].Source != "send" || a.Updates[len(a.Updates)-1].Source != "poll" ||
				a.Updates[len(a.Updates)-1].Text != "which one?" {
				t.Fatalf("send --task --wait answered with a new question: %+v", a)
			}
		})
	}
}

func TestSendToHandle(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "alice", "--mode", "inbox")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "helper", "alice")), &tok); err != nil {
		t.Fatal(err)
	}

	// Without a token the target's 401 is explained.
	_, err := cliErr(m, "send", "helper", "--agent", "alice", "--text", "hi")
	if err == nil || !strings.Contains(err.Error(), "--token-env") {
		t.Fatalf("no token: %v", err)
	}

	// The token from stdin; the server's own address needs no --allow-private.
	out, _, err := cliIO(m, tok.Token+"\n", "--json", "send", "helper", "--agent", "alice", "--text", "can you help?", "--context", "ctx-h", "--token-stdin")
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	var rec ownerapi.Outbound
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.TaskID == "" || rec.Protocol != "1.0" || rec.State != "submitted" {
		t.Fatalf("send: %v %s", err, out)
	}
	if inbox := cli(t, m, "inbox", "--agent", "helper"); !strings.Contains(inbox, rec.TaskID) || !strings.Contains(inbox, "can you help?") {
		t.Fatalf("helper's inbox: %s", inbox)
	}
	// --wait is bounded: an inbox agent answers when it wakes.
	_, errOut, err := cliIO(m, tok.Token, "send", "helper", "--agent", "alice", "--text", "are you there?", "--token-stdin", "--wait", "--timeout", "1s")
	if err != nil || !strings.Contains(errOut, "still submitted after 1s; follow with  switchboard poll ") {
		t.Fatalf("send --wait to a sleeping agent: %v %q", err, errOut)
	}
	cli(t, m, "reply", rec.TaskID, "--text", "gladly")

	t.Setenv("SWITCHBOARD_PEER_TOKEN", tok.Token)
	out = cli(t, m, "poll", rec.ID)
	if !strings.Contains(out, "completed") || !strings.Contains(out, "  | gladly") {
		t.Fatalf("poll: %s", out)
	}

	// Both sides of the conversation, each from its agent's view.
	out = cli(t, m, "history", "ctx-h", "--agent", "alice")
	if !strings.Contains(out, "alice sent to helper") || !strings.Contains(out, "answer from helper") || strings.Index(out, "can you help?") > strings.Index(out, "gladly") {
		t.Fatalf("alice's history: %s", out)
	}
	out = cli(t, m, "history", "ctx-h", "--agent", "helper")
	if !strings.Contains(out, "from alice") || !strings.Contains(out, "helper replied to alice") || !strings.Contains(out, "UNTRUSTED PEER MESSAGE >>>\n  | can you help?") {
		t.Fatalf("helper's history: %s", out)
	}
	var hs []ownerapi.Conversation
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "history", "ctx-h")), &hs); err != nil || len(hs) != 2 {
		t.Fatalf("history of all agents: %v %+v", err, hs)
	}
}

func TestPublicURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://agents.example.com/a/x/push": true,
		"http://127.0.0.1:8080/a/x/push":      false,
		"http://localhost:8080/a/x/push":      false,
		"http://[::1]/a/x/push":               false,
		"http://10.1.2.3/a/x/push":            false,
		"http://[::ffff:192.168.1.1]/push":    false,
		"https://93.184.216.34/push":          true,
		"::not a url":                         false,
	} {
		if got := publicURL(u); got != want {
			t.Errorf("publicURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestSendToHandleWithPush: with --push, the answer of an agent on the
// same server comes back as a push notification to the sender's own
// address, the outbox shows it without a poll, and the sender, asleep, is
// woken with an outbound_update wake whose hint is the history command.
func TestSendToHandleWithPush(t *testing.T) {
	wakes := make(chan map[string]any, 8)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		wakes <- body
	}))
	defer recv.Close()
	// The server pushes to its own loopback address: only with private
	// networks allowed (and plain http with them).
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.AllowPrivateNetworks = true })
	cli(t, m, "agent", "create", "alice", "--mode", "inbox")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	cli(t, m, "wake", "set", "--agent", "alice", "--url", recv.URL+"/wake", "--debounce", "0s")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "helper", "alice")), &tok); err != nil {
		t.Fatal(err)
	}
	out, _, err := cliIO(m, tok.Token+"\n", "--json", "send", "helper", "--agent", "alice", "--text", "tell me when done", "--token-stdin", "--push")
	if err != nil {
		t.Fatalf("send --push: %v", err)
	}
	var rec ownerapi.Outbound
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.TaskID == "" {
		t.Fatalf("send --push: %v %s", err, out)
	}
	cli(t, m, "reply", rec.TaskID, "--text", "done it")
	testwait.For(t, "the push to reach alice's outbox", func() bool {
		return outboxRecord(t, m, "alice", rec.ID).State == "completed"
	})
	if pushes := cli(t, m, "show", rec.TaskID, "--pushes"); !strings.Contains(pushes, "/a/alice/push") {
		t.Fatalf("helper's task pushes: %s", pushes)
	}
	for {
		select {
		case w := <-wakes:
			if w["kind"] != "outbound_update" {
				continue // the push of working, or another state, may come first
			}
			hint, _ := w["hint"].(string)
			preview, _ := w["preview"].(string)
			if w["contextId"] != rec.ContextID || !strings.Contains(hint, "history "+rec.ContextID) || !strings.Contains(preview, "[update on outbound task: completed] done it") {
				t.Fatalf("outbound_update wake: %v", w)
			}
			return
		case <-time.After(15 * time.Second):
			t.Fatal("alice was not woken by the update of the task she sent")
		}
	}
}

func TestSameStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Second)
	q := &a2a.Message{ID: "q1"}
	base := a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &t0, Message: q}
	for name, c := range map[string]struct {
		a    a2a.TaskStatus
		b    *a2a.TaskStatus
		want bool
	}{
		"no status before":         {base, nil, false},
		"the same":                 {base, &a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &t0, Message: &a2a.Message{ID: "q1"}}, true},
		"another state":            {base, &a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Timestamp: &t0, Message: q}, false},
		"another time":             {base, &a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &t1, Message: q}, false},
		"a time only once":         {base, &a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: q}, false},
		"another question":         {base, &a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &t0, Message: &a2a.Message{ID: "q2"}}, false},
		"a message only once":      {base, &a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &t0}, false},
		"neither time nor message": {a2a.TaskStatus{State: a2a.TaskStateWorking}, &a2a.TaskStatus{State: a2a.TaskStateWorking}, true},
	} {
		if got := sameStatus(&c.a, c.b); got != c.want {
			t.Errorf("%s: sameStatus = %v, want %v", name, got, c.want)
		}
	}
}
