package a2aedge_test

import (
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestAgentCallerTargetUnapproved: an agent's own token reaches another
// agent's address only where work sent by name would: an unapproved
// target (with --require-approval) is refused at its address as on
// POST /tasks.
func TestAgentCallerTargetUnapproved(t *testing.T) {
	h := facetest.New(t)
	h.Network.RequireApproval = true
	_, owner := h.Account("newcomer-owner")
	target, _ := h.NetAgent(owner, "newcomer", "inbox", "echo", "lab")
	if target.Approved {
		t.Fatal("the target started approved")
	}
	_, senderTok := h.NetAgent(h.OperatorToken, "sender", "connector", "", "lab") // the operator's: approved
	if r := h.Owner("POST", "/tasks", senderTok, map[string]any{"to": "newcomer", "task_description": "hi"}); r.Status != http.StatusNotFound {
		t.Fatalf("POST /tasks by name: %d %s", r.Status, r.Body)
	}
	if r := h.Call(h.Addr(target), senderTok, "SendMessage", facetest.UserMessage("m1", "hello")); r.RPCErrorCode() != -31401 {
		t.Fatalf("SendMessage at the unapproved agent's address: %d %s", r.Status, r.Body)
	}
}

// TestAgentCallerStreamEndsWithTargetAccount: an agent's stream at another
// agent's address ends when the target's account is disabled, as a peer's
// does: a disabled account's agents are not served.
func TestAgentCallerStreamEndsWithTargetAccount(t *testing.T) {
	h := facetest.New(t) // keep-alives every 50 ms
	tgtAcct, tgtOwner := h.Account("target-owner")
	_, sndOwner := h.Account("sender-owner")
	target, _ := h.NetAgent(tgtOwner, "target", "inbox", "echo", "lab")
	_, senderTok := h.NetAgent(sndOwner, "sender", "connector", "", "lab")
	id := h.Send(target, senderTok, "a1", "x")
	events, _ := h.Stream(h.Addr(target), senderTok, "SubscribeToTask", map[string]any{"id": id})
	facetest.Next(t, events)
	if r := h.Owner("PATCH", "/accounts/"+tgtAcct.ID, h.OperatorToken, map[string]any{"disabled": true}); r.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if ev := facetest.Next(t, events); facetest.Path(ev.Data, "error", "code") != float64(-31401) {
		t.Fatalf("the stream went on with %+v, want -31401", ev.Data)
	}
	facetest.Ended(t, events)
}
