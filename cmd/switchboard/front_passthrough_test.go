package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/server"
)

// rpcAnswer is a JSON-RPC answer as a peer reads it.
type rpcAnswer struct {
	status int
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawCall calls address with method as the bearer of token ("" for none),
// A2A 1.0, and returns the answer whatever it is.
func rawCall(t *testing.T, address, token, method string, params any) *rpcAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", address, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	b = bytes.TrimPrefix(bytes.TrimSpace(b), []byte("data: ")) // a stream's refusal is its one event
	a := &rpcAnswer{status: resp.StatusCode}
	if err := json.Unmarshal(b, a); err != nil {
		t.Fatalf("%s: %v: %s", method, err, b)
	}
	return a
}

// wantRPCError fails unless a is the JSON-RPC error code.
func wantRPCError(t *testing.T, what string, a *rpcAnswer, code int) {
	t.Helper()
	if a.Error == nil || a.Error.Code != code {
		t.Fatalf("%s: got %+v (result %s), want error %d", what, a.Error, a.Result, code)
	}
}

// passFront runs a server with a pass-through front of a 1.0 upstream
// that does not stream, and returns it with the peer tokens of bob and
// carol.
func passFront(t *testing.T) (m *server.Server, up *upstreamAgent, bob, carol string) {
	t.Helper()
	up = newUpstreamAgent(t, "1.0", false, upstreamOptions{tls: true})
	m = frontMain(t, up)
	bob = createFront(t, m, "pass", up.srv.URL+"/invoke", "--record", "none")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "pass", "carol")), &tok); err != nil {
		t.Fatal(err)
	}
	return m, up, bob, tok.Token
}

// countTasks counts the tasks the store holds.
func countTasks(t *testing.T, m *server.Server) int {
	t.Helper()
	_, n, err := m.DB.FindTasks(context.Background(), switchboard.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFrontPassThrough: a front with record none passes SendMessage,
// follow-ups, GetTask and CancelTask through to the upstream with our
// ids, writes no task, and keeps each peer to the tasks it was given.
func TestFrontPassThrough(t *testing.T) {
	m, up, bob, carol := passFront(t)
	addr := m.URL() + "/a/pass"

	task := peerSend(t, m, "pass", bob, "m1", "hello", "", true)
	if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("answer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
	}
	up.mu.Lock()
	theirs := string(up.tasks[0])
	up.mu.Unlock()
	if task.ID == "" || task.ID == theirs {
		t.Fatalf("the peer got task id %q, the upstream's is %q: want one of ours", task.ID, theirs)
	}
	got := peerCall(t, m, "pass", bob, "GetTask", map[string]any{"id": task.ID})
	if got.ID != task.ID || got.answer() != "upstream: hello" {
		t.Fatalf("GetTask: got %+v", got)
	}

	// A question and its follow-up reach the same task upstream.
	q := peerSend(t, m, "pass", bob, "m2", "ask", "", true)
	if q.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("state: got %s, want input required", q.Status.State)
	}
	f := peerSend(t, m, "pass", bob, "m3", "blue", q.ID, true)
	if f.ID != q.ID || f.answer() != "upstream: you chose blue" {
		t.Fatalf("follow-up: got %s %q, want %s answered", f.ID, f.answer(), q.ID)
	}

	// Isolation: carol reaches none of bob's tasks, by our id or the
	// upstream's, and neither does bob by the upstream's.
	wantRPCError(t, "carol's GetTask of bob's task", rawCall(t, addr, carol, "GetTask", map[string]any{"id": task.ID}), -32001)
	wantRPCError(t, "carol's GetTask by the upstream's id", rawCall(t, addr, carol, "GetTask", map[string]any{"id": theirs}), -32001)
	wantRPCError(t, "bob's GetTask by the upstream's id", rawCall(t, addr, bob, "GetTask", map[string]any{"id": theirs}), -32001)
	wantRPCError(t, "carol's CancelTask of bob's task", rawCall(t, addr, carol, "CancelTask", map[string]any{"id": q.ID}), -32001)
	msg := map[string]any{"messageId": "c1", "role": "ROLE_USER", "taskId": q.ID, "parts": []any{map[string]any{"text": "red"}}}
	wantRPCError(t, "carol's follow-up of bob's task", rawCall(t, addr, carol, "SendMessage", map[string]any{"message": msg}), -32001)

	// Cancel: a task still working upstream is canceled there.
	w := peerSend(t, m, "pass", bob, "m4", "wait", "", false)
	up.waitStarted(t, "wait")
	c := peerCall(t, m, "pass", bob, "CancelTask", map[string]any{"id": w.ID})
	if c.ID != w.ID || c.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask: got %s in %s, want %s canceled", c.ID, c.Status.State, w.ID)
	}
	up.waitCanceled(t, "the cancel did not reach the upstream")

	if n := countTasks(t, m); n != 0 {
		t.Fatalf("the store holds %d tasks, want none", n)
	}
}

// TestFrontPassThroughRefuses: what a pass-through front gives up is
// refused with the binding's error, said in its card and its status; a
// call without a token is refused as at any address.
func TestFrontPassThroughRefuses(t *testing.T) {
	m, _, bob, _ := passFront(t)
	addr := m.URL() + "/a/pass"
	task := peerSend(t, m, "pass", bob, "m1", "hello", "", true)

	wantRPCError(t, "ListTasks", rawCall(t, addr, bob, "ListTasks", map[string]any{}), -32004)
	wantRPCError(t, "CreateTaskPushNotificationConfig", rawCall(t, addr, bob, "CreateTaskPushNotificationConfig",
		map[string]any{"taskId": task.ID, "url": "https://hooks.example.com/x"}), -32003)
	wantRPCError(t, "SubscribeToTask of an upstream that does not stream", rawCall(t, addr, bob, "SubscribeToTask", map[string]any{"id": task.ID}), -32004)
	msg := map[string]any{"messageId": "m2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}

	a := rawCall(t, addr, "", "SendMessage", map[string]any{"message": msg})
	if a.status != http.StatusUnauthorized || a.Error == nil {
		t.Fatalf("no token: got HTTP %d %+v, want 401", a.status, a.Error)
	}
	big := strings.Repeat("x", 1<<20)
	long := map[string]any{"messageId": "m3", "role": "ROLE_USER", "parts": []any{map[string]any{"text": big}}}
	if a := rawCall(t, addr, bob, "SendMessage", map[string]any{"message": long}); a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over 1 MiB: got HTTP %d %+v, want 413", a.status, a.Error)
	}

	resp, err := http.Get(addr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			Streaming, PushNotifications bool
			Extensions                   []struct{ URI string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !card.Capabilities.Streaming || card.Capabilities.PushNotifications ||
		!slices.ContainsFunc(card.Capabilities.Extensions, func(e struct{ URI string }) bool { return strings.Contains(e.URI, "pass-through") }) {
		t.Fatalf("the card's capabilities: %+v, want streaming, no pushes and the pass-through extension", card.Capabilities)
	}

	out := cli(t, m, "front", "status", "pass")
	if !strings.Contains(out, "record") || !strings.Contains(out, "none") || !strings.Contains(out, "gives up") || !strings.Contains(out, "ListTasks") {
		t.Fatalf("front status said:\n%s", out)
	}
	if _, err := cliErr(m, "agent", "update", "pass", "--record", "nothing"); err == nil || !strings.Contains(err.Error(), `record must be "task"`) {
		t.Fatalf("a bad record: got %v", err)
	}
	// A bad value is refused before the agent is made; a record is a
	// front's setting only.
	if _, err := cliErr(m, "agent", "create", "bad", "--mode", "front", "--upstream", "https://up.example/a2a", "--record", "nothing"); err == nil || !strings.Contains(err.Error(), `record must be "task"`) {
		t.Fatalf("a bad record at create: got %v", err)
	}
	if _, err := cliErr(m, "agent", "show", "bad"); err == nil {
		t.Fatal("the agent of a refused create was made")
	}
	if _, err := cliErr(m, "agent", "create", "inbox", "--mode", "inbox", "--record", "none"); err == nil || !strings.Contains(err.Error(), "front mode") {
		t.Fatalf("a record for an inbox agent: got %v", err)
	}
	// Back to a record: the address is a recorded front again.
	cli(t, m, "agent", "update", "pass", "--record", "task")
	if a := rawCall(t, addr, bob, "ListTasks", map[string]any{}); a.Error != nil {
		t.Fatalf("ListTasks of a recorded front: %+v", a.Error)
	}
}

// TestFrontPassThroughBound: the ids are bounded; an id forgotten is
// "task not found", the most recent still reach the upstream.
func TestFrontPassThroughBound(t *testing.T) {
	m, _, bob, _ := passFront(t)
	addr := m.URL() + "/a/pass"
	m.Fronts.PassIDs().SetMax(2) // a task and its context
	first := peerSend(t, m, "pass", bob, "m1", "hello", "", true)
	second := peerSend(t, m, "pass", bob, "m2", "again", "", true)
	if n := m.Fronts.PassIDs().Len(); n != 2 {
		t.Fatalf("%d ids kept, want 2", n)
	}
	wantRPCError(t, "GetTask of an evicted id", rawCall(t, addr, bob, "GetTask", map[string]any{"id": first.ID}), -32001)
	if got := peerCall(t, m, "pass", bob, "GetTask", map[string]any{"id": second.ID}); got.answer() != "upstream: again" {
		t.Fatalf("GetTask of the latest: got %+v", got)
	}
}

// TestFrontPassThroughBindings: peers in HTTP+JSON, gRPC and A2A 0.3
// JSON-RPC take the pass-through path too, and nothing is written.
func TestFrontPassThroughBindings(t *testing.T) {
	m, _, bob, _ := passFront(t)
	addr := m.URL() + "/a/pass"
	for name, binding := range oneBindings {
		got := peerOver(t, addr, bob, binding, "via "+name)
		if want := "upstream: via " + name; artifactText(got) != want || got.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s peer: got %q in %s, want %q completed", name, artifactText(got), got.Status.State, want)
		}
	}
	call03 := func(method string, params any) map[string]any {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequest("POST", addr, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.Error != nil {
			t.Fatalf("%s: %v %v", method, err, a.Error)
		}
		return a.Result
	}
	sent := call03("message/send", map[string]any{"message": map[string]any{"kind": "message", "messageId": "v03", "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": "old"}}}})
	id, _ := sent["id"].(string)
	got := call03("tasks/get", map[string]any{"id": id})
	if b, _ := json.Marshal(got); got["id"] != id || !strings.Contains(string(b), "upstream: old") {
		t.Fatalf("0.3 tasks/get of %q: %s", id, b)
	}
	if n := countTasks(t, m); n != 0 {
		t.Fatalf("the store holds %d tasks, want none", n)
	}
}

// TestFrontPassThroughRefusesOtherBindings: over HTTP+JSON and gRPC,
// what a pass-through front gives up is refused with the binding's error
// too, and the tasks it passed are there.
func TestFrontPassThroughRefusesOtherBindings(t *testing.T) {
	m, _, bob, _ := passFront(t)
	addr := m.URL() + "/a/pass"
	for name, binding := range oneBindings {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := peerClient(t, ctx, addr, bob, binding)
			defer c.Destroy()
			task := peerOver(t, addr, bob, binding, "hello")
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID || artifactText(got) != "upstream: hello" {
				t.Fatalf("GetTask: %+v, %v", got, err)
			}
			if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Errorf("ListTasks: got %v, want UnsupportedOperation", err)
			}
			if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://hooks.example.com/x"}); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
				t.Errorf("CreateTaskPushConfig: got %v, want PushNotificationNotSupported", err)
			}
			for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Errorf("SubscribeToTask of an upstream that does not stream: got %v, want UnsupportedOperation", err)
				}
				break
			}
			var last a2a.Event
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("streamed"))}) {
				if err != nil {
					t.Fatalf("SendStreamingMessage: %v", err)
				}
				last = ev
			}
			if tk, ok := last.(*a2a.Task); !ok || artifactText(tk) != "upstream: streamed" {
				t.Fatalf("SendStreamingMessage: last event %#v", last)
			}
		})
	}
}

// sseCall calls a stream method as the bearer of token and hands each
// event's result to fn until fn returns false or the stream ends.
func sseCall(t *testing.T, address, token, method string, params any, fn func(result map[string]any) bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", address, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var a struct {
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &a); err != nil || a.Error != nil {
			t.Errorf("%s: %v %v", method, err, a.Error)
			return
		}
		if !fn(a.Result) {
			return
		}
	}
}

// eventTask returns the task id and state an event of a 1.0 stream names.
func eventTask(result map[string]any) (id, state string) {
	for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
		if ev, ok := result[k].(map[string]any); ok {
			id, _ = ev["taskId"].(string)
			if k == "task" {
				id, _ = ev["id"].(string)
			}
			if st, ok := ev["status"].(map[string]any); ok {
				state, _ = st["state"].(string)
			}
			return id, state
		}
	}
	return "", ""
}

// TestFrontPassThroughStreams: with an upstream that streams, a
// pass-through front's SendStreamingMessage and SubscribeToTask pass its
// events through in our ids; Last-Event-ID is refused.
func TestFrontPassThroughStreams(t *testing.T) {
	up := newUpstreamAgent(t, "1.0", true, upstreamOptions{tls: true})
	m := frontMain(t, up)
	bob := createFront(t, m, "pass", up.srv.URL+"/invoke", "--record", "none")
	addr := m.URL() + "/a/pass"

	msg := map[string]any{"messageId": "s1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}}
	var ids []string
	var final string
	sseCall(t, addr, bob, "SendStreamingMessage", map[string]any{"message": msg}, func(r map[string]any) bool {
		id, state := eventTask(r)
		ids = append(ids, id)
		if state != "" {
			final = state
		}
		return true
	})
	up.mu.Lock()
	theirs := string(up.tasks[0])
	up.mu.Unlock()
	if len(ids) < 2 || final != "TASK_STATE_COMPLETED" {
		t.Fatalf("the stream's tasks %v, last state %s; want events up to completed", ids, final)
	}
	for _, id := range ids {
		if id != ids[0] || id == theirs || id == "" {
			t.Fatalf("the stream named tasks %v; the upstream's is %s", ids, theirs)
		}
	}
	if got := peerCall(t, m, "pass", bob, "GetTask", map[string]any{"id": ids[0]}); got.answer() != "upstream: hello" {
		t.Fatalf("GetTask of the streamed task: %+v", got)
	}

	// SubscribeToTask follows a task that works until it is canceled.
	w := peerSend(t, m, "pass", bob, "s2", "wait", "", false)
	up.waitStarted(t, "wait")
	subscribed, done := make(chan struct{}), make(chan string)
	go func() {
		last, once := "", false
		sseCall(t, addr, bob, "SubscribeToTask", map[string]any{"id": w.ID}, func(r map[string]any) bool {
			id, state := eventTask(r)
			if id != w.ID {
				t.Errorf("the subscription named task %s, want %s", id, w.ID)
			}
			if state != "" {
				last = state
			}
			if !once {
				once = true
				close(subscribed)
			}
			return true
		})
		done <- last
	}()
	<-subscribed
	if c := peerCall(t, m, "pass", bob, "CancelTask", map[string]any{"id": w.ID}); c.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask: %s", c.Status.State)
	}
	if last := <-done; last != "TASK_STATE_CANCELED" {
		t.Fatalf("the subscription ended in %q, want canceled", last)
	}

	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": map[string]any{"id": w.ID}})
	req, _ := http.NewRequest("POST", addr, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "-32004") {
		t.Fatalf("a resumed subscription: %s, want UnsupportedOperation", b)
	}
	if n := countTasks(t, m); n != 0 {
		t.Fatalf("the store holds %d tasks, want none", n)
	}
}
