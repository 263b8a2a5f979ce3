package a2aedge_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestV03Methods(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")

	params := facetest.LegacyMessage("m1", "hello over 0.3")
	params["configuration"] = map[string]any{"blocking": true, "historyLength": 5}
	task := h.Call(h.Addr(g), bob, "message/send", params).Result(t)
	id, _ := task["id"].(string)
	if task["kind"] != "task" || facetest.Path(task, "status", "state") != "submitted" || id == "" {
		t.Fatalf("message/send: %v", task)
	}
	msg := task["history"].([]any)[0].(map[string]any)
	if msg["kind"] != "message" || msg["role"] != "user" || facetest.Path(msg["parts"].([]any)[0], "kind") != "text" {
		t.Fatalf("0.3 history message: %v", msg)
	}

	// A task created over 0.3 is the same task over 1.0.
	v1 := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": id}).Result(t)
	if facetest.Path(v1, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("1.0 view: %v", v1)
	}

	h.Reply(id, a2a.TaskStateCompleted, "answer")
	got := h.Call(h.Addr(g), bob, "tasks/get", map[string]any{"id": id, "historyLength": 1}).Result(t)
	if facetest.Path(got, "status", "state") != "completed" || len(got["history"].([]any)) != 1 {
		t.Fatalf("tasks/get: %v", got)
	}
	art := got["artifacts"].([]any)[0].(map[string]any)
	if p := art["parts"].([]any)[0].(map[string]any); p["kind"] != "text" || p["text"] != "answer" {
		t.Fatalf("artifact: %v", art)
	}
	facetest.WantRPCError(t, h.Call(h.Addr(g), carol, "tasks/get", map[string]any{"id": id}), 200, -32001)
	facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "tasks/cancel", map[string]any{"id": id}), 200, -32002)

	id2 := facetest.Path(h.Call(h.Addr(g), bob, "message/send", facetest.LegacyMessage("m2", "cancel me")).Result(t), "id").(string)
	if c := h.Call(h.Addr(g), bob, "tasks/cancel", map[string]any{"id": id2}).Result(t); facetest.Path(c, "status", "state") != "canceled" {
		t.Fatalf("tasks/cancel: %v", c)
	}

	// Follow-up with taskId in 0.3.
	id3 := facetest.Path(h.Call(h.Addr(g), bob, "message/send", facetest.LegacyMessage("m3", "q")).Result(t), "id").(string)
	h.Reply(id3, a2a.TaskStateInputRequired, "which?")
	follow := facetest.LegacyMessage("m4", "that one")
	follow["message"].(map[string]any)["taskId"] = id3
	if f := h.Call(h.Addr(g), bob, "message/send", follow).Result(t); f["id"] != id3 || facetest.Path(f, "status", "state") != "submitted" {
		t.Fatalf("0.3 follow-up: %v", f)
	}

	t.Run("PushConfigs", func(t *testing.T) {
		set := h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/set", map[string]any{
			"taskId": id3, "pushNotificationConfig": map[string]any{"id": "p1", "url": "https://example.com/h", "token": "tk",
				"authentication": map[string]any{"schemes": []any{"Bearer"}, "credentials": "c"}},
		}).Result(t)
		if facetest.Path(set, "pushNotificationConfig", "id") != "p1" || set["taskId"] != id3 {
			t.Fatalf("set: %v", set)
		}
		get := h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3, "pushNotificationConfigId": "p1"}).Result(t)
		if facetest.Path(get, "pushNotificationConfig", "token") != "tk" {
			t.Fatalf("get: %v", get)
		}
		first := h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3}).Result(t)
		if facetest.Path(first, "pushNotificationConfig", "id") != "p1" {
			t.Fatalf("get without config id: %v", first)
		}
		list := h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/list", map[string]any{"id": id3})
		if arr, ok := list.JSON["result"].([]any); !ok || len(arr) != 1 {
			t.Fatalf("list: %s", list.Body)
		}
		del := h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/delete", map[string]any{"id": id3, "pushNotificationConfigId": "p1"})
		if v, ok := del.JSON["result"]; !ok || v != nil || del.Status != 200 {
			t.Fatalf("delete: %s", del.Body)
		}
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "tasks/pushNotificationConfig/get", map[string]any{"id": id3, "pushNotificationConfigId": "p1"}), 200, -32001)
	})
	t.Run("ExtendedCard", func(t *testing.T) {
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "agent/getAuthenticatedExtendedCard", nil), 200, -32007)
	})
	t.Run("Invalid", func(t *testing.T) {
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "message/send", map[string]any{}), 200, -32602)
		agentRole := facetest.LegacyMessage("m9", "x")
		agentRole["message"].(map[string]any)["role"] = "agent"
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "message/send", agentRole), 200, -32602)
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "tasks/get", map[string]any{}), 200, -32602)
		facetest.WantRPCError(t, h.Call(h.Addr(g), bob, "tasks/list", map[string]any{}), 200, -32601)
	})
}
