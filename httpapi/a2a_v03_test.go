package httpapi_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/httpapi"
)

func TestV03Methods(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	g := h.agent("alice")
	bob, carol := h.peerToken(g, "bob"), h.peerToken(g, "carol")

	params := legacyMessage("m1", "hello over 0.3")
	params["configuration"] = map[string]any{"blocking": true, "historyLength": 5}
	task := h.call(h.addr(g), bob, "message/send", params).result(t)
	id, _ := task["id"].(string)
	if task["kind"] != "task" || path(task, "status", "state") != "submitted" || id == "" {
		t.Fatalf("message/send: %v", task)
	}
	msg := task["history"].([]any)[0].(map[string]any)
	if msg["kind"] != "message" || msg["role"] != "user" || path(msg["parts"].([]any)[0], "kind") != "text" {
		t.Fatalf("0.3 history message: %v", msg)
	}

	// A task created over 0.3 is the same task over 1.0.
	v1 := h.call(h.addr(g), bob, "GetTask", map[string]any{"id": id}).result(t)
	if path(v1, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("1.0 view: %v", v1)
	}

	h.reply(id, a2a.TaskStateCompleted, "answer")
	got := h.call(h.addr(g), bob, "tasks/get", map[string]any{"id": id, "historyLength": 1}).result(t)
	if path(got, "status", "state") != "completed" || len(got["history"].([]any)) != 1 {
		t.Fatalf("tasks/get: %v", got)
	}
	art := got["artifacts"].([]any)[0].(map[string]any)
	if p := art["parts"].([]any)[0].(map[string]any); p["kind"] != "text" || p["text"] != "answer" {
		t.Fatalf("artifact: %v", art)
	}
	wantRPCError(t, h.call(h.addr(g), carol, "tasks/get", map[string]any{"id": id}), 200, -32001)
	wantRPCError(t, h.call(h.addr(g), bob, "tasks/cancel", map[string]any{"id": id}), 200, -32002)

	id2 := path(h.call(h.addr(g), bob, "message/send", legacyMessage("m2", "cancel me")).result(t), "id").(string)
	if c := h.call(h.addr(g), bob, "tasks/cancel", map[string]any{"id": id2}).result(t); path(c, "status", "state") != "canceled" {
		t.Fatalf("tasks/cancel: %v", c)
	}

	// Follow-up with taskId in 0.3.
	id3 := path(h.call(h.addr(g), bob, "message/send", legacyMessage("m3", "q")).result(t), "id").(string)
	h.reply(id3, a2a.TaskStateInputRequired, "which?")
	follow := legacyMessage("m4", "that one")
	follow["message"].(map[string]any)["taskId"] = id3
	if f := h.call(h.addr(g), bob, "message/send", follow).result(t); f["id"] != id3 || path(f, "status", "state") != "submitted" {
		t.Fatalf("0.3 follow-up: %v", f)
	}

	t.Run("PushConfigs", func(t *testing.T) {
		set := h.call(h.addr(g), bob, "tasks/pushNotificationConfig/set", map[string]any{
			"taskId": id3, "pushNotificationConfig": map[string]any{"id": "p1", "url": "https://example.com/h", "token": "tk",
				"authentication": map[string]any{"schemes": []any{"Bearer"}, "credentials": "c"}},
		}).result(t)
		if path(set, "pushNotificationConfig", "id") != "p1" || set["taskId"] != id3 {
			t.Fatalf("set: %v", set)
		}
		get := h.call(h.addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3, "pushNotificationConfigId": "p1"}).result(t)
		if path(get, "pushNotificationConfig", "token") != "tk" {
			t.Fatalf("get: %v", get)
		}
		first := h.call(h.addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3}).result(t)
		if path(first, "pushNotificationConfig", "id") != "p1" {
			t.Fatalf("get without config id: %v", first)
		}
		list := h.call(h.addr(g), bob, "tasks/pushNotificationConfig/list", map[string]any{"id": id3})
		if arr, ok := list.json["result"].([]any); !ok || len(arr) != 1 {
			t.Fatalf("list: %s", list.body)
		}
		del := h.call(h.addr(g), bob, "tasks/pushNotificationConfig/delete", map[string]any{"id": id3, "pushNotificationConfigId": "p1"})
		if v, ok := del.json["result"]; !ok || v != nil || del.status != 200 {
			t.Fatalf("delete: %s", del.body)
		}
		wantRPCError(t, h.call(h.addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3, "pushNotificationConfigId": "p1"}), 200, -32001)
	})
	t.Run("ExtendedCard", func(t *testing.T) {
		wantRPCError(t, h.call(h.addr(g), bob, "agent/getAuthenticatedExtendedCard", nil), 200, -32007)
	})
	t.Run("Invalid", func(t *testing.T) {
		wantRPCError(t, h.call(h.addr(g), bob, "message/send", map[string]any{}), 200, -32602)
		agentRole := legacyMessage("m9", "x")
		agentRole["message"].(map[string]any)["role"] = "agent"
		wantRPCError(t, h.call(h.addr(g), bob, "message/send", agentRole), 200, -32602)
		wantRPCError(t, h.call(h.addr(g), bob, "tasks/get", map[string]any{}), 200, -32602)
		wantRPCError(t, h.call(h.addr(g), bob, "tasks/list", map[string]any{}), 200, -32601)
	})
}
