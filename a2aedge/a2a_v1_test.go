package a2aedge_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestV1SendMessage(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")

	t.Run("OK", func(t *testing.T) {
		params := facetest.UserMessage("m-ok", "hello")
		params["metadata"] = map[string]any{"trace": "t1"}
		res := h.Call(h.Addr(g), bob, "SendMessage", params, "A2A-Version", "1.0").Result(t)
		task, ok := res["task"].(map[string]any)
		if !ok {
			t.Fatalf("result is not {task}: %v", res)
		}
		if task["id"] == "" || task["contextId"] == "" || facetest.Path(task, "status", "state") != "TASK_STATE_SUBMITTED" {
			t.Fatalf("task %v", task)
		}
		if _, has := task["kind"]; has {
			t.Fatal("1.0 task carries kind")
		}
		hist := task["history"].([]any)
		msg := hist[0].(map[string]any)
		if msg["role"] != "ROLE_USER" || msg["taskId"] != task["id"] || msg["contextId"] != task["contextId"] {
			t.Fatalf("history message %v", msg)
		}
		if facetest.Path(task, "metadata", "trace") != "t1" {
			t.Fatalf("metadata lost: %v", task["metadata"])
		}
		if ts, _ := facetest.Path(task, "status", "timestamp").(string); !strings.HasSuffix(ts, "Z") {
			t.Fatalf("timestamp %q is not UTC", ts)
		}
	})
	t.Run("ReturnImmediatelyIgnoredForInbox", func(t *testing.T) {
		params := facetest.UserMessage("m-ri", "hello")
		params["configuration"] = map[string]any{"returnImmediately": false}
		start := time.Now()
		res := h.Call(h.Addr(g), bob, "SendMessage", params).Result(t)
		if facetest.Path(res, "task", "status", "state") != "TASK_STATE_SUBMITTED" || time.Since(start) > 2*time.Second {
			t.Fatalf("blocking send to an inbox agent waited or failed: %v", res)
		}
	})
	t.Run("HistoryLengthZero", func(t *testing.T) {
		params := facetest.UserMessage("m-h0", "hello")
		params["configuration"] = map[string]any{"historyLength": 0}
		res := h.Call(h.Addr(g), bob, "SendMessage", params).Result(t)
		if _, has := res["task"].(map[string]any)["history"]; has {
			t.Fatalf("history returned with historyLength 0: %v", res)
		}
	})
	t.Run("SameMessageIDIsIdempotent", func(t *testing.T) {
		id1 := h.Send(g, bob, "m-dup", "once")
		id2 := h.Send(g, bob, "m-dup", "once")
		if id1 != id2 {
			t.Fatalf("resent message created task %s beside %s", id2, id1)
		}
		// Another peer may reuse the id: its own task.
		carol := h.PeerToken(g, "carol-dup")
		if id3 := h.Send(g, carol, "m-dup", "once"); id3 == id1 {
			t.Fatal("carol's message joined bob's task")
		}
	})
	t.Run("ClientContextID", func(t *testing.T) {
		params := facetest.UserMessage("m-ctx", "hello")
		params["message"].(map[string]any)["contextId"] = "conv-1"
		res := h.Call(h.Addr(g), bob, "SendMessage", params).Result(t)
		if facetest.Path(res, "task", "contextId") != "conv-1" {
			t.Fatalf("contextId %v", facetest.Path(res, "task", "contextId"))
		}
		params = facetest.UserMessage("m-ctx-bad", "hello")
		params["message"].(map[string]any)["contextId"] = "has spaces/and slashes"
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", params), 200, -32602)
	})
	invalid := map[string]map[string]any{
		"AgentRole":    {"message": map[string]any{"messageId": "x1", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "hi"}}}},
		"NoMessageID":  {"message": map[string]any{"role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}},
		"NoParts":      {"message": map[string]any{"messageId": "x2", "role": "ROLE_USER", "parts": []any{}}},
		"TwoContents":  {"message": map[string]any{"messageId": "x3", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "a", "url": "https://x"}}}},
		"NoRole":       {"message": map[string]any{"messageId": "x4", "parts": []any{map[string]any{"text": "hi"}}}},
		"LongID":       {"message": map[string]any{"messageId": strings.Repeat("i", 201), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}},
		"NegativeHist": {"message": map[string]any{"messageId": "x5", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}, "configuration": map[string]any{"historyLength": -1}},
		"TooManyParts": {"message": map[string]any{"messageId": "x6", "role": "ROLE_USER", "parts": manyParts(101)}},
	}
	for name, params := range invalid {
		t.Run("Invalid"+name, func(t *testing.T) {
			facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", params), http.StatusOK, -32602)
		})
	}
	t.Run("PushConfigRefusedWhenPushIsOff", func(t *testing.T) {
		params := facetest.UserMessage("m-push", "hello")
		params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": "https://example.com/hook"}}
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", params), http.StatusOK, -32003)
	})
	t.Run("AllPartKinds", func(t *testing.T) {
		params := map[string]any{"message": map[string]any{"messageId": "m-parts", "role": "ROLE_USER", "parts": []any{
			map[string]any{"text": "t", "mediaType": "text/markdown"},
			map[string]any{"data": map[string]any{"k": 1}},
			map[string]any{"url": "https://example.com/f.pdf", "filename": "f.pdf", "mediaType": "application/pdf"},
			map[string]any{"raw": "aGVsbG8=", "filename": "h.txt"},
		}}}
		res := h.Call(h.Addr(g), bob, "SendMessage", params).Result(t)
		parts := facetest.Path(res, "task", "history").([]any)[0].(map[string]any)["parts"].([]any)
		if len(parts) != 4 || parts[3].(map[string]any)["raw"] != "aGVsbG8=" {
			t.Fatalf("parts %v", parts)
		}
	})
}

func manyParts(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"text": "p"}
	}
	return out
}

func TestV1FollowUpAndIsolation(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	id := h.Send(g, bob, "m1", "first")
	h.Reply(id, a2a.TaskStateInputRequired, "which one?")

	follow := facetest.UserMessage("m2", "the blue one")
	follow["message"].(map[string]any)["taskId"] = id
	res := h.Call(h.Addr(g), bob, "SendMessage", follow).Result(t)
	task := res["task"].(map[string]any)
	if task["id"] != id || facetest.Path(task, "status", "state") != "TASK_STATE_SUBMITTED" || len(task["history"].([]any)) != 3 {
		t.Fatalf("follow-up: %v", task)
	}

	t.Run("OtherPeerCannotContinue", func(t *testing.T) {
		m := facetest.UserMessage("m3", "hijack")
		m["message"].(map[string]any)["taskId"] = id
		facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "SendMessage", m), 200, -32001)
	})
	t.Run("OtherPeerCannotRead", func(t *testing.T) {
		facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "GetTask", map[string]any{"id": id}), 200, -32001)
		facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "CancelTask", map[string]any{"id": id}), 200, -32001)
		unknown := h.Call(h.Addr(g), carol, "GetTask", map[string]any{"id": "no-such-task"})
		mine := h.Call(h.Addr(g), carol, "GetTask", map[string]any{"id": id})
		if unknown.JSON["error"].(map[string]any)["message"] != mine.JSON["error"].(map[string]any)["message"] {
			t.Fatal("not found and not yours look different")
		}
	})
	t.Run("UnknownTaskID", func(t *testing.T) {
		m := facetest.UserMessage("m4", "x")
		m["message"].(map[string]any)["taskId"] = "does-not-exist"
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", m), 200, -32001)
	})
	t.Run("ContextMismatch", func(t *testing.T) {
		m := facetest.UserMessage("m5", "x")
		m["message"].(map[string]any)["taskId"] = id
		m["message"].(map[string]any)["contextId"] = "another-context"
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", m), 200, -32602)
	})
	t.Run("TerminalTaskRefusesMessages", func(t *testing.T) {
		h.Reply(id, a2a.TaskStateCompleted, "done")
		m := facetest.UserMessage("m6", "more")
		m["message"].(map[string]any)["taskId"] = id
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "SendMessage", m), 200, -32004)
	})
	t.Run("GetTaskAfterReply", func(t *testing.T) {
		task := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": id}).Result(t)
		if facetest.Path(task, "status", "state") != "TASK_STATE_COMPLETED" {
			t.Fatalf("state %v", facetest.Path(task, "status", "state"))
		}
		arts := task["artifacts"].([]any)
		if len(arts) != 1 || facetest.Path(arts[0], "parts").([]any)[0].(map[string]any)["text"] != "done" {
			t.Fatalf("artifacts %v", arts)
		}
		if facetest.Path(task, "status", "message", "role") != "ROLE_AGENT" {
			t.Fatalf("status message %v", facetest.Path(task, "status", "message"))
		}
		short := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": id, "historyLength": 1}).Result(t)
		if n := len(short["history"].([]any)); n != 1 {
			t.Fatalf("historyLength 1 gave %d", n)
		}
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": id, "historyLength": -2}), 200, -32602)
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "GetTask", map[string]any{}), 200, -32602)
	})
}

func TestV1CancelTask(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "cancel me")
	task := h.Call(h.Addr(g), bob, "CancelTask", map[string]any{"id": id}).Result(t)
	if facetest.Path(task, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v", task)
	}
	again := h.Call(h.Addr(g), bob, "CancelTask", map[string]any{"id": id}).Result(t)
	if facetest.Path(again, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatal("cancelling twice is not idempotent")
	}
	done := h.Send(g, bob, "m2", "finish me")
	h.Reply(done, a2a.TaskStateCompleted, "ok")
	facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "CancelTask", map[string]any{"id": done}), 200, -32002)
	facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "CancelTask", map[string]any{"id": "nope"}), 200, -32001)
}

func TestV1ListTasks(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	var ids []string
	for i := range 5 {
		m := facetest.UserMessage(fmt.Sprintf("m%d", i), fmt.Sprintf("task %d", i))
		if i%2 == 0 {
			m["message"].(map[string]any)["contextId"] = "even"
		}
		res := h.Call(h.Addr(g), bob, "SendMessage", m).Result(t)
		ids = append(ids, facetest.Path(res, "task", "id").(string))
	}
	h.Send(g, carol, "c1", "carol's")
	h.Reply(ids[0], a2a.TaskStateCompleted, "done")

	// Pages of two, newest status first; the completed task moved to the top.
	var seen []string
	token := ""
	for page := 0; page < 4; page++ {
		params := map[string]any{"pageSize": 2}
		if token != "" {
			params["pageToken"] = token
		}
		res := h.Call(h.Addr(g), bob, "ListTasks", params).Result(t)
		if res["totalSize"] != float64(5) || res["pageSize"] != float64(2) {
			t.Fatalf("page %d: %v", page, res)
		}
		for _, tk := range res["tasks"].([]any) {
			seen = append(seen, tk.(map[string]any)["id"].(string))
			if _, has := tk.(map[string]any)["artifacts"]; has {
				t.Fatal("artifacts listed without includeArtifacts")
			}
		}
		token = res["nextPageToken"].(string)
		if token == "" {
			break
		}
	}
	want := []string{ids[0], ids[4], ids[3], ids[2], ids[1]}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("listing order\n got %v\nwant %v", seen, want)
	}

	filtered := h.Call(h.Addr(g), bob, "ListTasks", map[string]any{"contextId": "even", "status": "TASK_STATE_SUBMITTED"}).Result(t)
	if filtered["totalSize"] != float64(2) {
		t.Fatalf("filtered: %v", filtered)
	}
	withArts := h.Call(h.Addr(g), bob, "ListTasks", map[string]any{"includeArtifacts": true, "pageSize": 1, "historyLength": 0}).Result(t)
	first := withArts["tasks"].([]any)[0].(map[string]any)
	if _, has := first["artifacts"]; !has {
		t.Fatal("includeArtifacts ignored")
	}
	if _, has := first["history"]; has {
		t.Fatal("historyLength 0 ignored")
	}
	carolsList := h.Call(h.Addr(g), carol, "ListTasks", map[string]any{}).Result(t)
	if carolsList["totalSize"] != float64(1) {
		t.Fatalf("carol sees %v tasks", carolsList["totalSize"])
	}
	empty := h.Call(h.Addr(g), bob, "ListTasks", map[string]any{"contextId": "none"}).Result(t)
	if tasks, ok := empty["tasks"].([]any); !ok || len(tasks) != 0 || empty["nextPageToken"] != "" {
		t.Fatalf("empty listing: %v", empty)
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if r := h.Call(h.Addr(g), bob, "ListTasks", map[string]any{"statusTimestampAfter": past}).Result(t); r["totalSize"] != float64(5) {
		t.Fatalf("statusTimestampAfter: %v", r["totalSize"])
	}
	for name, params := range map[string]map[string]any{
		"PageSizeZero":  {"pageSize": 0},
		"PageSizeLarge": {"pageSize": 101},
		"BadToken":      {"pageToken": "garbage!"},
		"BadStatus":     {"status": "DONE"},
		"BadTimestamp":  {"statusTimestampAfter": "yesterday"},
		"NegativeHist":  {"historyLength": -1},
	} {
		t.Run(name, func(t *testing.T) {
			facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "ListTasks", params), 200, -32602)
		})
	}
}

func TestV1PushConfigs(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	id := h.Send(g, bob, "m1", "push me")

	created := h.Call(h.Addr(g), bob, "CreateTaskPushNotificationConfig", map[string]any{
		"taskId": id, "url": "https://example.com/hook", "token": "secret-1",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "c"},
	}).Result(t)
	cfgID, _ := created["id"].(string)
	if cfgID == "" || created["taskId"] != id || created["url"] != "https://example.com/hook" {
		t.Fatalf("created %v", created)
	}
	nested := h.Call(h.Addr(g), bob, "CreateTaskPushNotificationConfig", map[string]any{
		"taskId": id, "pushNotificationConfig": map[string]any{"id": "second", "url": "https://example.com/2"},
	}).Result(t)
	if nested["id"] != "second" {
		t.Fatalf("nested shape: %v", nested)
	}
	got := h.Call(h.Addr(g), bob, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": cfgID}).Result(t)
	if got["token"] != "secret-1" || facetest.Path(got, "authentication", "scheme") != "Bearer" {
		t.Fatalf("get: %v", got)
	}
	list := h.Call(h.Addr(g), bob, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id}).Result(t)
	if n := len(list["configs"].([]any)); n != 2 {
		t.Fatalf("list: %d configs", n)
	}
	// ProtoJSON parsers accept the proto field names too (the TCK sends task_id).
	if got := h.Call(h.Addr(g), bob, "GetTaskPushNotificationConfig", map[string]any{"task_id": id, "id": cfgID}).Result(t); got["id"] != cfgID {
		t.Fatalf("get by task_id: %v", got)
	}
	if list := h.Call(h.Addr(g), bob, "ListTaskPushNotificationConfigs", map[string]any{"task_id": id}).Result(t); len(list["configs"].([]any)) != 2 {
		t.Fatalf("list by task_id: %v", list)
	}
	if third := h.Call(h.Addr(g), bob, "CreateTaskPushNotificationConfig", map[string]any{"task_id": id, "id": "third", "url": "https://example.com/3"}).Result(t); third["taskId"] != id {
		t.Fatalf("create by task_id: %v", third)
	}
	h.Call(h.Addr(g), bob, "DeleteTaskPushNotificationConfig", map[string]any{"task_id": id, "id": "third"}).Result(t)
	del := h.Call(h.Addr(g), bob, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": id, "id": cfgID})
	if del.Result(t) == nil {
		t.Fatal("delete has no result")
	}
	h.Call(h.Addr(g), bob, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": id, "id": cfgID}).Result(t) // idempotent
	facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": cfgID}), 200, -32001)
	// Another peer sees none of it.
	facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "ListTaskPushNotificationConfigs", map[string]any{"taskId": id}), 200, -32001)
	facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "url": "https://e.com"}), 200, -32001)
	for name, p := range map[string]map[string]any{
		"NoURL":       {"taskId": id},
		"BadScheme":   {"taskId": id, "url": "ftp://example.com"},
		"Credentials": {"taskId": id, "url": "https://u:p@example.com"},
		"NoTask":      {"url": "https://example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "CreateTaskPushNotificationConfig", p), 200, -32602)
		})
	}
	// Inline on send.
	m := facetest.UserMessage("m2", "inline")
	m["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": "https://example.com/inline", "token": "t"}}
	inlineID := facetest.Path(h.Call(h.Addr(g), bob, "SendMessage", m).Result(t), "task", "id").(string)
	list = h.Call(h.Addr(g), bob, "ListTaskPushNotificationConfigs", map[string]any{"taskId": inlineID}).Result(t)
	if cs := list["configs"].([]any); len(cs) != 1 || facetest.Path(cs[0], "url") != "https://example.com/inline" {
		t.Fatalf("inline config: %v", list)
	}
}

func TestV1PushConfigsUnsupported(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "x")
	for _, m := range []string{"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"} {
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, m, map[string]any{"taskId": id, "id": "a", "url": "https://example.com"}), 200, -32003)
	}
}

func TestV1ExtendedCard(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "GetExtendedAgentCard", map[string]any{}), 200, -32007)

	secret := []a2a.AgentSkill{{ID: "private", Name: "Private", Description: "for peers", Tags: []string{}}}
	_, err := h.DB.UpdateAgent(t.Context(), g.ID, facetest.AgentUpdateExtended(secret))
	facetest.Must(t, err)
	card := h.Call(h.Addr(g), bob, "GetExtendedAgentCard", nil).Result(t)
	skills := card["skills"].([]any)
	if len(skills) != 2 || facetest.Path(skills[1], "id") != "private" || facetest.Path(card, "capabilities", "extendedAgentCard") != true {
		t.Fatalf("extended card: %v", card)
	}
	pub := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", nil, "")
	if strings.Contains(string(pub.Body), "private") || facetest.Path(pub.JSON, "capabilities", "extendedAgentCard") != true {
		t.Fatalf("public card leaks or hides: %s", pub.Body)
	}
	// Without a token there is no extended card.
	facetest.WantRPCError(t, h.Call(h.Addr(g), "", "GetExtendedAgentCard", nil), 401, -31401)
}
