package a2aedge_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// quotaCode is the JSON-RPC code of a refusal for a peer's quota.
const quotaCode = -32050

// quotaProtocol is how a test speaks one A2A version: its method names,
// the params of a new message and of a follow-up, and where the answer
// keeps the task.
type quotaProtocol struct {
	send, cancel string
	message      func(id, text string) map[string]any
	taskOf       func(result map[string]any) map[string]any
	// followUp sets the task a message continues.
	followUp func(params map[string]any, taskID string)
	reason   bool // errors carry an ErrorInfo with a reason (1.0)
}

var quotaProtocols = map[string]quotaProtocol{
	"1.0": {
		send: "SendMessage", cancel: "CancelTask", message: facetest.UserMessage, reason: true,
		taskOf:   func(r map[string]any) map[string]any { return r["task"].(map[string]any) },
		followUp: func(p map[string]any, id string) { p["message"].(map[string]any)["taskId"] = id },
	},
	"0.3": {
		send: "message/send", cancel: "tasks/cancel", message: facetest.LegacyMessage,
		taskOf:   func(r map[string]any) map[string]any { return r },
		followUp: func(p map[string]any, id string) { p["message"].(map[string]any)["taskId"] = id },
	},
}

// wantQuotaError checks that an answer is a refusal for a quota, in the
// shape of the protocol, whose message holds each of says.
func wantQuotaError(t *testing.T, p quotaProtocol, r *facetest.Response, says ...string) {
	t.Helper()
	facetest.WantRPCError(t, r, http.StatusOK, quotaCode)
	msg, _ := facetest.Path(r.JSON, "error", "message").(string)
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("error message %q does not say %q", msg, s)
		}
	}
	data := facetest.Path(r.JSON, "error", "data")
	if !p.reason {
		if data != nil {
			t.Errorf("0.3 error carries data: %s", r.Body)
		}
		return
	}
	details, _ := data.([]any)
	if len(details) != 1 || facetest.Path(details[0], "reason") != "QUOTA_EXCEEDED" {
		t.Errorf("error data %v, want one ErrorInfo with reason QUOTA_EXCEEDED", data)
	}
}

// TestQuotaOpenTasks checks MaxOpenTasksPerPeer over both versions: a
// peer holding as many unfinished tasks as it may on an agent is refused
// a new one, with a code and a message that say which limit and what to
// do, and nothing is stored; a message to one of its tasks, a retried
// send and another peer are not refused; a task that ends, by the agent's
// answer or the peer's cancel, makes room.
func TestQuotaOpenTasks(t *testing.T) {
	for version, p := range quotaProtocols {
		t.Run(version, func(t *testing.T) {
			h := facetest.New(t)
			h.Tasks.MaxOpenTasksPerPeer = 3
			g := h.Agent("box")
			bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
			send := func(token string, params map[string]any) *facetest.Response {
				t.Helper()
				return h.Call(h.Addr(g), token, p.send, params)
			}
			newTask := func(token, id string) string {
				t.Helper()
				return p.taskOf(send(token, p.message(id, "hello")).Result(t))["id"].(string)
			}
			var ids []string
			for i := range 3 {
				ids = append(ids, newTask(bob, fmt.Sprint("m-", i)))
			}

			full := send(bob, p.message("m-3", "one more"))
			wantQuotaError(t, p, full, "at most 3 unfinished tasks", "you have 3", "cancel")
			if _, err := h.DB.FindTaskByMessageID(t.Context(), g.ID, h.PeerOf(bob).ID, "m-3"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
				t.Fatalf("the refused message was stored: %v", err)
			}

			// A message to an unfinished task is not a new task.
			follow := p.message("m-4", "and also")
			p.followUp(follow, ids[0])
			if got := p.taskOf(send(bob, follow).Result(t))["id"]; got != ids[0] {
				t.Fatalf("follow-up went to %v, want %s", got, ids[0])
			}
			// A send retried is answered with its task, as ever.
			if got := p.taskOf(send(bob, p.message("m-1", "hello")).Result(t))["id"]; got != ids[1] {
				t.Fatalf("retried send answered with %v, want %s", got, ids[1])
			}
			// Another peer has a quota of its own.
			newTask(carol, "c-1")

			// An answered task and a canceled one each make room for one.
			h.Reply(ids[1], a2a.TaskStateCompleted, "done")
			newTask(bob, "m-5")
			wantQuotaError(t, p, send(bob, p.message("m-6", "again")), "at most 3")
			cancel := h.Call(h.Addr(g), bob, p.cancel, map[string]any{"id": ids[2]})
			cancel.Result(t)
			newTask(bob, "m-6")
			wantQuotaError(t, p, send(bob, p.message("m-7", "again")), "at most 3")
		})
	}
}

// TestQuotaOpenTasksStream checks that a streamed send is refused as a
// plain one is: the error as the stream's only event.
func TestQuotaOpenTasksStream(t *testing.T) {
	h := facetest.New(t)
	h.Tasks.MaxOpenTasksPerPeer = 1
	g := h.Agent("box")
	bob := h.PeerToken(g, "bob")
	h.Send(g, bob, "m-1", "hello")
	events, resp := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m-2", "more"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	ev := facetest.Next(t, events)
	if code, _ := facetest.Path(ev.Data, "error", "code").(float64); int(code) != quotaCode {
		t.Fatalf("stream event %v, want error %d", ev.Data, quotaCode)
	}
	facetest.Ended(t, events)
}

// TestQuotaPeerBytes checks MaxPeerBytes over both versions: a new task or
// a follow-up that would take the bytes of the peer's unfinished tasks on
// the agent past the limit is refused, saying the limit; a follow-up that
// fits is taken; a finished task no longer counts.
func TestQuotaPeerBytes(t *testing.T) {
	for version, p := range quotaProtocols {
		t.Run(version, func(t *testing.T) {
			h := facetest.New(t)
			h.Tasks.MaxPeerBytes = 50_000
			g := h.Agent("box")
			bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
			send := func(token, id, taskID string, size int) *facetest.Response {
				t.Helper()
				params := p.message(id, strings.Repeat("x", size))
				if taskID != "" {
					p.followUp(params, taskID)
				}
				return h.Call(h.Addr(g), token, p.send, params)
			}
			// Two tasks of about 20 kB each: about 40 kB of 50.
			first := p.taskOf(send(bob, "m-1", "", 20_000).Result(t))["id"].(string)
			second := p.taskOf(send(bob, "m-2", "", 20_000).Result(t))["id"].(string)

			// A third would pass it; so would a follow-up of 12 kB.
			wantQuotaError(t, p, send(bob, "m-3", "", 20_000), "at most 50000 bytes (48.8 KiB)", "cancel")
			wantQuotaError(t, p, send(bob, "m-4", first, 12_000), "at most 50000 bytes")
			tasks, _, err := h.DB.FindTasks(t.Context(), switchboard.TaskFilter{AgentID: &g.ID, NoTotal: true})
			facetest.Must(t, err)
			if len(tasks) != 2 {
				t.Fatalf("%d tasks stored, want the 2 accepted", len(tasks))
			}
			for _, task := range tasks {
				if n := len(task.A2A.History); n != 1 {
					t.Fatalf("task %s holds %d messages, want 1: the refused follow-up was stored", task.ID(), n)
				}
			}
			// A follow-up that fits, and another peer, are taken.
			if got := p.taskOf(send(bob, "m-5", first, 2_000).Result(t))["id"]; got != first {
				t.Fatalf("follow-up went to %v, want %s", got, first)
			}
			send(carol, "c-1", "", 20_000).Result(t)

			// A finished task does not count: room for another.
			h.Reply(second, a2a.TaskStateCompleted, "done")
			send(bob, "m-6", "", 20_000).Result(t)
			wantQuotaError(t, p, send(bob, "m-7", "", 20_000), "at most 50000 bytes")
		})
	}
}
