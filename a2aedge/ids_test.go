package a2aedge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// badIDParts are what the id tests put into an id, as they appear inside a
// JSON string on the wire: escapes, and raw bytes that JSON allows
// unescaped (DEL, C1 controls) or that are not UTF-8 at all.
var badIDParts = map[string]string{
	"NUL":           `\u0000`,
	"Newline":       `\n`,
	"CarriageRet":   `\r`,
	"Tab":           `\t`,
	"Escape":        `\u001b`,
	"US":            `\u001f`,
	"DEL":           "\x7f",
	"DELEscaped":    `\u007f`,
	"C1NEL":         "\u0085", // raw UTF-8, C2 85
	"C1CSIEscaped":  `\u009b`,
	"C1Last":        "\u009f",
	"InvalidUTF8":   "\xff",
	"CutUTF8":       "\xc3",
	"LoneSurrogate": `\ud800`,
}

// badIDPlaceholder marks where a bad part goes in a request body.
const badIDPlaceholder = "@@BAD@@"

// withBadID returns a JSON-RPC request body for method with params, the
// placeholder replaced by part.
func withBadID(t *testing.T, method string, params any, part string) string {
	t.Helper()
	p, err := json.Marshal(params)
	facetest.Must(t, err)
	body := `{"jsonrpc":"2.0","id":"req-ids","method":"` + method + `","params":` + string(p) + `}`
	if !strings.Contains(body, badIDPlaceholder) {
		t.Fatalf("no placeholder in %s", body)
	}
	return strings.ReplaceAll(body, badIDPlaceholder, part)
}

// TestSendRefusesControlCharactersInIDs: a peer's messageId, taskId,
// contextId or referenceTaskIds with a control character (C0, DEL, C1) or
// that is not UTF-8 is refused with -32602 over both A2A versions, and
// nothing is stored: no task, no history, no recorded message id.
func TestSendRefusesControlCharactersInIDs(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("ids")
	bob := h.PeerToken(g, "bob")
	peer := h.PeerOf(bob)
	existing := h.Send(g, bob, "first", "a task to continue")
	h.Reply(existing, a2a.TaskStateInputRequired, "go on")

	type shape struct {
		method string
		params func(msg map[string]any) map[string]any
		msg    func(id string) map[string]any
	}
	versions := map[string]shape{
		"V1": {"SendMessage", nil, func(id string) map[string]any {
			return map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}
		}},
		"V03": {"message/send", nil, func(id string) map[string]any {
			return map[string]any{"kind": "message", "messageId": id, "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}
		}},
	}
	fields := map[string]func(msg map[string]any){
		"messageId":        func(msg map[string]any) { msg["messageId"] = "m-" + badIDPlaceholder + "-x" },
		"taskId":           func(msg map[string]any) { msg["taskId"] = existing + badIDPlaceholder },
		"contextId":        func(msg map[string]any) { msg["contextId"] = "ctx-" + badIDPlaceholder },
		"referenceTaskIds": func(msg map[string]any) { msg["referenceTaskIds"] = []any{existing, "t-" + badIDPlaceholder} },
	}
	n := 0
	for vname, v := range versions {
		for fname, set := range fields {
			for pname, part := range badIDParts {
				n++
				msgID := "ok-" + vname + "-" + fname + "-" + pname
				msg := v.msg(msgID)
				set(msg)
				for _, method := range []string{v.method} {
					r := h.RPC(h.Addr(g), bob, withBadID(t, method, map[string]any{"message": msg}, part))
					if r.RPCErrorCode() != -32602 {
						t.Errorf("%s %s with %s: HTTP %d %s, want -32602", method, fname, pname, r.Status, r.Body)
						continue
					}
					if text, _ := facetest.Path(r.JSON, "error", "message").(string); !strings.Contains(text, fname) || !strings.Contains(text, "control character") {
						t.Errorf("%s %s with %s: message %q does not say what is wrong", method, fname, pname, text)
					}
				}
				if fname != "messageId" {
					if _, err := h.DB.FindTaskByMessageID(context.Background(), g.ID, peer.ID, msgID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
						t.Errorf("%s %s with %s: the message was recorded (%v)", vname, fname, pname, err)
					}
				}
			}
		}
	}
	tasks, _, err := h.DB.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID})
	facetest.Must(t, err)
	if len(tasks) != 1 || tasks[0].ID() != a2a.TaskID(existing) || len(tasks[0].A2A.History) != 2 {
		t.Fatalf("after %d refused sends the agent has %d tasks (want the one, with its 2 messages): %+v", n, len(tasks), tasks)
	}
}

// TestStreamRefusesControlCharactersInIDs: the streaming sends apply the
// same rule, and answer the refusal in the stream.
func TestStreamRefusesControlCharactersInIDs(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("ids")
	bob := h.PeerToken(g, "bob")
	for method, msg := range map[string]map[string]any{
		"SendStreamingMessage": {"messageId": "m-\x00", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}},
		"message/stream":       {"kind": "message", "messageId": "m-\x00", "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
	} {
		events, _ := h.Stream(h.Addr(g), bob, method, map[string]any{"message": msg})
		ev := facetest.Next(t, events)
		text, _ := facetest.Path(ev.Data, "error", "message").(string)
		if code, _ := facetest.Path(ev.Data, "error", "code").(float64); code != -32602 || !strings.Contains(text, "control character") {
			t.Errorf("%s with a NUL in messageId: %v, want -32602", method, ev.Data)
		}
	}
	tasks, _, err := h.DB.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID})
	facetest.Must(t, err)
	if len(tasks) != 0 {
		t.Fatalf("refused streams stored %d tasks", len(tasks))
	}
}

// TestTaskMethodsRefuseControlCharactersInIDs: a task id with a control
// character, which no task has, is refused as invalid params by the
// methods that read, cancel or configure a task.
func TestTaskMethodsRefuseControlCharactersInIDs(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("ids")
	bob := h.PeerToken(g, "bob")
	existing := h.Send(g, bob, "first", "hello")
	for method, params := range map[string]map[string]any{
		"GetTask":           {"id": existing + badIDPlaceholder},
		"CancelTask":        {"id": existing + badIDPlaceholder},
		"tasks/get":         {"id": existing + badIDPlaceholder},
		"tasks/cancel":      {"id": existing + badIDPlaceholder},
		"SubscribeToTask":   {"id": existing + badIDPlaceholder},
		"tasks/resubscribe": {"id": existing + badIDPlaceholder},
	} {
		for pname, part := range map[string]string{"NUL": `\u0000`, "Newline": `\n`, "InvalidUTF8": "\xff"} {
			r := h.RPC(h.Addr(g), bob, withBadID(t, method, params, part))
			if !strings.Contains(string(r.Body), `"code":-32602`) {
				t.Errorf("%s with %s in the id: HTTP %d %s, want -32602", method, pname, r.Status, r.Body)
			}
		}
	}
	if got := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": existing}).Result(t); facetest.Path(got, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("the task changed: %v", got)
	}
}
