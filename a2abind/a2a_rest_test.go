package a2abind_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// restClient resolves the card at addr and returns an a2a-go client that
// can speak only HTTP+JSON: it finds the binding on the card or fails.
func restClient(t *testing.T, addr, token string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, addr)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2aclient.WithRESTTransport(facetest.AuthClient(token)))
	c, err := f.CreateFromCard(ctx, card)
	if err != nil {
		t.Fatalf("REST client: %v", err)
	}
	return c
}

func textMessage(id, text string) *a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.ID = id
	return &a2a.SendMessageRequest{Message: m}
}

// TestRESTBinding drives every method of the HTTP+JSON binding with the
// a2a-go client's REST transport against a live server.
func TestRESTBinding(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	c := restClient(t, h.Addr(g), tok)
	ctx := context.Background()

	res, err := c.SendMessage(ctx, textMessage("m-rest-1", "hello"))
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("send: %#v", res)
	}
	t.Run("IdempotentByMessageID", func(t *testing.T) {
		again, err := c.SendMessage(ctx, textMessage("m-rest-1", "hello"))
		if err != nil || again.(*a2a.Task).ID != task.ID {
			t.Fatalf("resend: %v %v, want task %s", again, err, task.ID)
		}
	})
	t.Run("SameTaskOverJSONRPC", func(t *testing.T) {
		r := h.Call(h.Addr(g), tok, "GetTask", map[string]any{"id": task.ID}, "A2A-Version", "1.0")
		if got := facetest.Path(r.Result(t), "id"); got != string(task.ID) {
			t.Fatalf("JSON-RPC GetTask: %v", got)
		}
	})
	t.Run("Get", func(t *testing.T) {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.ID != task.ID || len(got.History) != 1 {
			t.Fatalf("get: %v %v", got, err)
		}
	})
	t.Run("List", func(t *testing.T) {
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || list.TotalSize != 1 || list.Tasks[0].ID != task.ID {
			t.Fatalf("list: %+v %v", list, err)
		}
	})
	t.Run("PushConfig", func(t *testing.T) {
		pc, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "hook", URL: "https://peer.example/hook"})
		if err != nil || pc.URL != "https://peer.example/hook" {
			t.Fatalf("create: %v %v", pc, err)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: pc.ID})
		if err != nil || got.URL != pc.URL {
			t.Fatalf("get: %v %v", got, err)
		}
		all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(all) != 1 {
			t.Fatalf("list: %v %v", all, err)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: pc.ID}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(all) != 0 {
			t.Fatalf("after delete: %v %v", all, err)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		var states []a2a.TaskState
		for ev, err := range c.SendStreamingMessage(ctx, textMessage("m-rest-stream", "stream me")) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				states = append(states, ev.Status.State)
				h.Reply(string(ev.ID), a2a.TaskStateCompleted, "done")
			case *a2a.TaskStatusUpdateEvent:
				states = append(states, ev.Status.State)
			}
		}
		if len(states) < 2 || states[0] != a2a.TaskStateSubmitted || states[len(states)-1] != a2a.TaskStateCompleted {
			t.Fatalf("stream states %v", states)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %v %v", got, err)
		}
	})
	t.Run("AnotherPeersTaskIsNotFound", func(t *testing.T) {
		carol := restClient(t, h.Addr(g), h.PeerToken(g, "carol"))
		if _, err := carol.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("carol gets bob's task: %v, want not found", err)
		}
		if _, err := carol.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("carol cancels bob's task: %v, want not found", err)
		}
		if list, err := carol.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil || list.TotalSize != 0 {
			t.Fatalf("carol lists: %+v %v", list, err)
		}
	})
	t.Run("ProtoNames", func(t *testing.T) {
		r := h.Do("POST", h.Addr(g)+"/message:send", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"},
			`{"message":{"message_id":"m-proto","context_id":"ctx-proto","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"trace_id":"t1"}}}`)
		if r.Status != http.StatusOK || facetest.Path(r.JSON, "task", "contextId") != "ctx-proto" ||
			facetest.Path(r.JSON, "task", "history").([]any)[0].(map[string]any)["metadata"].(map[string]any)["trace_id"] != "t1" {
			t.Fatalf("a send with proto field names: %d %s", r.Status, r.Body)
		}
	})
	t.Run("V03Client", func(t *testing.T) {
		resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: a2av0.NewAgentCardParser()}
		card, err := resolver.Resolve(ctx, h.Addr(g), agentcard.WithPath("/.well-known/agent.json"))
		if err != nil {
			t.Fatal(err)
		}
		f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: facetest.AuthClient(tok)}))
		old, err := f.CreateFromCard(ctx, card)
		if err != nil {
			t.Fatalf("0.3 REST client: %v", err)
		}
		res, err := old.SendMessage(ctx, textMessage("m-rest-03", "hello from 0.3"))
		if err != nil {
			t.Fatalf("0.3 send: %v", err)
		}
		got, err := old.GetTask(ctx, &a2a.GetTaskRequest{ID: res.(*a2a.Task).ID})
		if err != nil || got.Status.State != a2a.TaskStateSubmitted {
			t.Fatalf("0.3 get: %v %v", got, err)
		}
	})
}

// TestRESTBindingRefusals sends what the HTTP+JSON binding must refuse:
// each answer is the binding's error (an HTTP status and a
// google.rpc.Status body) and nothing is stored.
func TestRESTBindingRefusals(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	base := h.Addr(g)
	auth := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	valid := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range auth {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := map[string]struct {
		method, path string
		header       map[string]string
		body         string
		status       int
		reason       string
	}{
		"MalformedJSON":      {"POST", "/message:send", auth, `{"message":`, 400, "PARSE_ERROR"},
		"NoMessage":          {"POST", "/message:send", auth, `{}`, 400, "INVALID_PARAMS"},
		"WrongContentType":   {"POST", "/message:send", with("Content-Type", "text/plain"), valid, 415, "INVALID_PARAMS"},
		"Oversized":          {"POST", "/message:send", auth, `{"message":{"messageId":"m-big","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 1<<20) + `"}]}}`, 413, "INVALID_REQUEST"},
		"Unauthenticated":    {"POST", "/message:send", with("Authorization", ""), valid, 401, "UNAUTHENTICATED"},
		"BadToken":           {"POST", "/message:send", with("Authorization", "Bearer sb_peer_nope"), valid, 401, "UNAUTHENTICATED"},
		"UnknownTaskAction":  {"POST", "/tasks/t-1:frobnicate", auth, "", 400, "INVALID_REQUEST"},
		"UnknownTask":        {"GET", "/tasks/no-such-task", auth, "", 404, "TASK_NOT_FOUND"},
		"WrongMethod":        {"GET", "/message:send", auth, "", 404, "METHOD_NOT_FOUND"},
		"UnknownRoute":       {"GET", "/tasks/t-1/frobnicate", auth, "", 404, "METHOD_NOT_FOUND"},
		"NoExtendedCard":     {"GET", "/extendedAgentCard", auth, "", 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		"PushOff":            {"GET", "/tasks/t-1/pushNotificationConfigs", auth, "", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		"UnsupportedVersion": {"POST", "/message:send", with("A2A-Version", "9.9"), valid, 400, "VERSION_NOT_SUPPORTED"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := h.Do(tc.method, base+tc.path, tc.header, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", r.Status, tc.status, r.Body)
			}
			if tc.reason == "" {
				return
			}
			if got := facetest.Path(r.JSON, "error", "code"); got != float64(tc.status) {
				t.Errorf("error.code %v, want %d: %s", got, tc.status, r.Body)
			}
			details, _ := facetest.Path(r.JSON, "error", "details").([]any)
			if len(details) == 0 || facetest.Path(details[len(details)-1], "reason") != tc.reason {
				t.Errorf("reason: %s, want %s", r.Body, tc.reason)
			}
			if msg, _ := facetest.Path(r.JSON, "error", "message").(string); msg == "" {
				t.Errorf("no message: %s", r.Body)
			}
			if tc.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
	list, err := restClient(t, base, tok).ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 0 {
		t.Fatalf("refused requests stored tasks: %+v %v", list, err)
	}
}

// TestRESTBindingRateLimit: the peer's rate limit holds on HTTP+JSON, and
// is shared with JSON-RPC.
func TestRESTBindingRateLimit(t *testing.T) {
	h := facetest.New(t, facetest.WithRate(2))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	auth := map[string]string{"Authorization": "Bearer " + tok}
	h.Call(h.Addr(g), tok, "ListTasks", map[string]any{}, "A2A-Version", "1.0")
	if r := h.Do("GET", h.Addr(g)+"/tasks", auth, ""); r.Status != 200 {
		t.Fatalf("second call: %d %s", r.Status, r.Body)
	}
	r := h.Do("GET", h.Addr(g)+"/tasks", auth, "")
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || facetest.Path(r.JSON, "error", "status") != "RESOURCE_EXHAUSTED" {
		t.Fatalf("third call: %d %v %s", r.Status, r.Header, r.Body)
	}
}

// TestBindingsOnAnAgentDomain: an agent domain serves the HTTP+JSON
// binding at its root and its card names it there, and gRPC on the
// domain's host with no tenant; the deployment's own root does not serve
// the binding (its /tasks are the owner API's).
func TestBindingsOnAnAgentDomain(t *testing.T) {
	h := facetest.NewDomain(t)
	_, tok := withDomainAgent(t, h)
	r := h.At("GET", "http://bot.example.com/.well-known/agent-card.json", nil, "")
	var card struct {
		SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion, Tenant string }
	}
	facetest.MustJSON(t, r.Body, &card)
	var rest, grpc bool
	for _, i := range card.SupportedInterfaces {
		switch {
		case i.ProtocolBinding == "HTTP+JSON" && i.ProtocolVersion == "1.0":
			rest = i.URL == "http://bot.example.com"
		case i.ProtocolBinding == "GRPC":
			grpc = i.URL == "bot.example.com:80" && i.Tenant == ""
		}
	}
	if !rest || !grpc {
		t.Fatalf("the domain's card: %+v", card.SupportedInterfaces)
	}
	auth := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	send := h.At("POST", "http://bot.example.com/message:send", auth,
		`{"message":{"messageId":"m-dom","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	id, _ := facetest.Path(send.JSON, "task", "id").(string)
	if send.Status != http.StatusOK || id == "" {
		t.Fatalf("send on the domain: %d %s", send.Status, send.Body)
	}
	if got := h.At("GET", "http://bot.example.com/tasks/"+id, auth, ""); got.Status != http.StatusOK || got.JSON["id"] != id {
		t.Fatalf("get on the domain: %d %s", got.Status, got.Body)
	}
	if got := h.At("GET", facetest.DeploymentURL+"/tasks/"+id, auth, ""); got.Status == http.StatusOK {
		t.Fatalf("the deployment's root served the binding: %s", got.Body)
	}
}

// TestRESTStreamCut: a stream the client cuts mid-way gives its peer's
// stream allowance back, and stores nothing more than the send did; a
// stream past the allowance is refused inside the stream.
func TestRESTStreamCut(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxStreamsPerPeer = 1 }))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	c := restClient(t, h.Addr(g), tok)
	ctx, cut := context.WithCancel(context.Background())
	first := make(chan a2a.TaskID, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range c.SendStreamingMessage(ctx, textMessage("m-cut", "cut me")) {
			if task, ok := ev.(*a2a.Task); ok && err == nil {
				first <- task.ID
			}
		}
	}()
	id := <-first
	// While it is open, a second stream of the peer is refused.
	for _, err := range c.SendStreamingMessage(context.Background(), textMessage("m-second", "no room")) {
		if !strings.Contains(fmt.Sprint(err), "too many open streams") {
			t.Fatalf("a second stream: %v, want too many open streams", err)
		}
		break
	}
	cut()
	<-done
	testwait.For(t, "the cut stream's allowance to come back", func() bool {
		for ev, err := range c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: id}) {
			return err == nil && ev != nil
		}
		return false
	})
	list, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 1 {
		t.Fatalf("tasks after the cut: %+v %v", list, err)
	}
}

// TestRESTBindingPreflight: a browser's preflight of the HTTP+JSON binding
// is answered 204 with the methods the binding serves, DELETE among them.
func TestRESTBindingPreflight(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	req, err := http.NewRequest(http.MethodOptions, h.Addr(g)+"/tasks/t1", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("status %d, want %d", got, want)
	}
	if got, want := res.Header.Get("Access-Control-Allow-Methods"), "GET, HEAD, POST, DELETE, OPTIONS"; got != want {
		t.Fatalf("Access-Control-Allow-Methods %q, want %q", got, want)
	}
}

// TestRESTStreamResume: the HTTP+JSON binding's stream events carry the
// ids of the task's events (not the SDK's random ones), and a client that
// subscribes again with Last-Event-ID gets exactly the events it missed.
func TestRESTStreamResume(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "x")          // event 1: the task
	h.Reply(id, a2a.TaskStateWorking, "a")   // event 2
	h.Reply(id, a2a.TaskStateWorking, "b")   // event 3
	h.Reply(id, a2a.TaskStateCompleted, "c") // events 4 (artifact) and 5 (status)

	subscribe := func(prefix, lastEventID string) []facetest.Event {
		t.Helper()
		req, err := http.NewRequest("POST", h.Addr(g)+prefix+"/tasks/"+id+":subscribe", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+bob)
		events, resp := h.StreamRequest(req, "Last-Event-ID", lastEventID)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("subscribe: status %d", resp.StatusCode)
		}
		var got []facetest.Event
		for ev := range events {
			if ev.Bad != "" {
				t.Fatalf("malformed stream line %q", ev.Bad)
			}
			got = append(got, ev)
		}
		return got
	}
	ids := func(evs []facetest.Event) string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.ID)
		}
		return strings.Join(out, " ")
	}
	if got := subscribe("", "2"); ids(got) != "3 4 5" || got[1].Data["artifactUpdate"] == nil {
		t.Fatalf("1.0 resumed after 2: ids %q, events %v", ids(got), got)
	}
	if got := subscribe("/v1", "3"); ids(got) != "4 5" {
		t.Fatalf("0.3 resumed after 3: ids %q, events %v", ids(got), got)
	}
	// Caught up: the task as it stands, under the id of its last event.
	if got := subscribe("", "5"); len(got) != 1 || got[0].ID != "5" || facetest.Path(got[0].Data, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("caught-up resume: %+v", got)
	}
}

// TestRESTListPageSizeZero: an HTTP+JSON task list that names pageSize=0
// is refused, as over JSON-RPC, rather than given the default page size.
func TestRESTListPageSizeZero(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	h.Send(g, bob, "m1", "x")
	for query, want := range map[string]int{"?pageSize=0": 400, "?pageSize=-1": 400, "?pageSize=1": 200, "": 200} {
		if r := h.Do("GET", h.Addr(g)+"/tasks"+query, map[string]string{"Authorization": "Bearer " + bob}, ""); r.Status != want {
			t.Errorf("GET /tasks%s: status %d, want %d: %s", query, r.Status, want, r.Body)
		}
	}
}
