package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestTokenOnlyAsBearer: a valid token sent under another scheme than
// Bearer is no credential: the owner API answers 401.
func TestTokenOnlyAsBearer(t *testing.T) {
	h := newHarness(t)
	for _, scheme := range []string{"Token", "Basic", "sbo"} {
		r := h.do("GET", h.srv.URL+"/agents", map[string]string{"Authorization": scheme + " " + h.operatorToken}, "")
		if r.status != http.StatusUnauthorized {
			t.Errorf("the operator's token under %q: HTTP %d", scheme, r.status)
		}
	}
}

// TestPeerStreamEndsWithAgentAccount: a peer's stream at an agent's
// address ends when the agent's account is disabled: a disabled account's
// agents are not served.
func TestPeerStreamEndsWithAgentAccount(t *testing.T) {
	h := newHarness(t) // keep-alives every 50 ms
	acct, _ := h.account("owner")
	g := h.agentOf(acct, "served")
	bob := h.peerToken(g, "bob")
	id := h.send(g, bob, "p1", "x")
	events, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	next(t, events)
	if r := h.owner("PATCH", "/accounts/"+acct.ID, h.operatorToken, map[string]any{"disabled": true}); r.status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	if ev := next(t, events); path(ev.data, "error", "code") != float64(-31401) {
		t.Fatalf("the stream went on with %+v, want -31401", ev.data)
	}
	ended(t, events)
}

// TestUnapprovedAgentCannotCallAnAddress: an agent that is not approved
// cannot call another agent's address with its agent token, though both
// share a community.
func TestUnapprovedAgentCannotCallAnAddress(t *testing.T) {
	h := newHarness(t)
	_, tgtOwner := h.account("target-owner")
	_, sndOwner := h.account("sender-owner")
	target, _ := h.netAgent(tgtOwner, "target", "inbox", "echo", "lab")
	sender, senderTok := h.netAgent(sndOwner, "sender", "connector", "", "lab")
	h.send(target, senderTok, "a1", "x") // approved: it may
	_, err := h.db.UpdateAgent(context.Background(), sender.ID, switchboard.AgentUpdate{Approved: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	r := h.call(h.addr(target), senderTok, "SendMessage", userMessage("a2", "x"))
	if r.status == http.StatusOK && r.rpcErrorCode() == 0 {
		t.Fatalf("an unapproved agent's call was served: %s", r.body)
	}
}
