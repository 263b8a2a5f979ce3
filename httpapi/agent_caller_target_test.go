package httpapi_test

import (
	"net/http"
	"testing"
)

// TestAgentCallerTargetUnapproved: an agent's own token reaches another
// agent's address only where work sent by name would: an unapproved
// target (with --require-approval) is refused at its address as on
// POST /tasks.
func TestAgentCallerTargetUnapproved(t *testing.T) {
	h := newHarness(t)
	h.network.RequireApproval = true
	_, owner := h.account("newcomer-owner")
	target, _ := h.netAgent(owner, "newcomer", "inbox", "echo", "lab")
	if target.Approved {
		t.Fatal("the target started approved")
	}
	_, senderTok := h.netAgent(h.operatorToken, "sender", "connector", "", "lab") // the operator's: approved
	if r := h.owner("POST", "/tasks", senderTok, map[string]any{"to": "newcomer", "task_description": "hi"}); r.status != http.StatusNotFound {
		t.Fatalf("POST /tasks by name: %d %s", r.status, r.body)
	}
	if r := h.call(h.addr(target), senderTok, "SendMessage", userMessage("m1", "hello")); r.rpcErrorCode() != -31401 {
		t.Fatalf("SendMessage at the unapproved agent's address: %d %s", r.status, r.body)
	}
}

// TestAgentCallerStreamEndsWithTargetAccount: an agent's stream at another
// agent's address ends when the target's account is disabled, as a peer's
// does: a disabled account's agents are not served.
func TestAgentCallerStreamEndsWithTargetAccount(t *testing.T) {
	h := newHarness(t) // keep-alives every 50 ms
	tgtAcct, tgtOwner := h.account("target-owner")
	_, sndOwner := h.account("sender-owner")
	target, _ := h.netAgent(tgtOwner, "target", "inbox", "echo", "lab")
	_, senderTok := h.netAgent(sndOwner, "sender", "connector", "", "lab")
	id := h.send(target, senderTok, "a1", "x")
	events, _ := h.stream(h.addr(target), senderTok, "SubscribeToTask", map[string]any{"id": id})
	next(t, events)
	if r := h.owner("PATCH", "/accounts/"+tgtAcct.ID, h.operatorToken, map[string]any{"disabled": true}); r.status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	if ev := next(t, events); path(ev.data, "error", "code") != float64(-31401) {
		t.Fatalf("the stream went on with %+v, want -31401", ev.data)
	}
	ended(t, events)
}
