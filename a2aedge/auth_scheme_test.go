package a2aedge_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestTokenOnlyAsBearer: a valid token sent under another scheme than
// Bearer is no credential: the owner API answers 401.
func TestTokenOnlyAsBearer(t *testing.T) {
	h := facetest.New(t)
	for _, scheme := range []string{"Token", "Basic", "sbo"} {
		r := h.Do("GET", h.Server.URL+"/agents", map[string]string{"Authorization": scheme + " " + h.OperatorToken}, "")
		if r.Status != http.StatusUnauthorized {
			t.Errorf("the operator's token under %q: HTTP %d", scheme, r.Status)
		}
	}
}

// TestPeerStreamEndsWithAgentAccount: a peer's stream at an agent's
// address ends when the agent's account is disabled: a disabled account's
// agents are not served.
func TestPeerStreamEndsWithAgentAccount(t *testing.T) {
	h := facetest.New(t) // keep-alives every 50 ms
	acct, _ := h.Account("owner")
	g := h.AgentOf(acct, "served")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "p1", "x")
	events, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	facetest.Next(t, events)
	if r := h.Owner("PATCH", "/accounts/"+acct.ID, h.OperatorToken, map[string]any{"disabled": true}); r.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if ev := facetest.Next(t, events); facetest.Path(ev.Data, "error", "code") != float64(-31401) {
		t.Fatalf("the stream went on with %+v, want -31401", ev.Data)
	}
	facetest.Ended(t, events)
}

// TestUnapprovedAgentCannotCallAnAddress: an agent that is not approved
// cannot call another agent's address with its agent token, though both
// share a community.
func TestUnapprovedAgentCannotCallAnAddress(t *testing.T) {
	h := facetest.New(t)
	_, tgtOwner := h.Account("target-owner")
	_, sndOwner := h.Account("sender-owner")
	target, _ := h.NetAgent(tgtOwner, "target", "inbox", "echo", "lab")
	sender, senderTok := h.NetAgent(sndOwner, "sender", "connector", "", "lab")
	h.Send(target, senderTok, "a1", "x") // approved: it may
	_, err := h.DB.UpdateAgent(context.Background(), sender.ID, switchboard.AgentUpdate{Approved: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	r := h.Call(h.Addr(target), senderTok, "SendMessage", facetest.UserMessage("a2", "x"))
	if r.Status == http.StatusOK && r.RPCErrorCode() == 0 {
		t.Fatalf("an unapproved agent's call was served: %s", r.Body)
	}
}
