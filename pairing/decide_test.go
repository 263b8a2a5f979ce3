package pairing_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestDecideAfterPairingOff: once pairing is off for the agent, its
// pending request can be neither approved nor denied (by anyone, the
// owner too), is not listed, and no new one is taken; turned on again,
// the request is there.
func TestDecideAfterPairingOff(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	g, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	off := *w.agent
	off.Pairing = switchboard.PairingOff
	for _, by := range []string{pairing.ByOwner, pairing.ByAgent, pairing.ByPage} {
		_, err := w.svc.Approve(ctx, &off, g.UserCode, "", by)
		wantCode(t, err, switchboard.ENOTFOUND)
		_, err = w.svc.Deny(ctx, &off, g.UserCode, by)
		wantCode(t, err, switchboard.ENOTFOUND)
	}
	_, err = w.svc.Find(ctx, &off, g.UserCode)
	wantCode(t, err, switchboard.ENOTFOUND)
	if pending, err := w.svc.Pending(ctx, &off); err != nil || len(pending) != 0 {
		t.Fatalf("pending with pairing off: %d, %v", len(pending), err)
	}
	_, err = w.ask(&off, "192.0.2.2")
	wantCode(t, err, switchboard.ENOTFOUND)

	on := *w.agent
	on.Pairing = switchboard.PairingAgent
	if p, err := w.svc.Approve(ctx, &on, g.UserCode, "", pairing.ByAgent); err != nil || p.Status != switchboard.PairingApproved {
		t.Fatalf("approve with pairing on again: %+v, %v", p, err)
	}
}

// TestDecideRefusals: a decision names a request of its own agent, by a
// well-formed code, once, before it expires; a label given must be valid.
func TestDecideRefusals(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	g, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	other := w.newAgent("other")
	_, err = w.svc.Approve(ctx, other, g.UserCode, "", pairing.ByOwner)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = w.svc.Deny(ctx, other, g.UserCode, pairing.ByOwner)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = w.svc.Approve(ctx, w.agent, "not-a-code", "", pairing.ByOwner)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = w.svc.Approve(ctx, w.agent, g.UserCode, "bad label!", pairing.ByOwner)
	wantCode(t, err, switchboard.EINVALID)
	if p, err := w.svc.Find(ctx, w.agent, pairing.FormatUserCode(g.UserCode)); err != nil || p.Status != switchboard.PairingPending {
		t.Fatalf("the request after refused decisions: %+v, %v", p, err)
	}
	_, err = w.svc.Deny(ctx, w.agent, g.UserCode, pairing.ByPage)
	must(t, err)
	_, err = w.svc.Approve(ctx, w.agent, g.UserCode, "", pairing.ByOwner)
	wantCode(t, err, switchboard.ECONFLICT) // decided already

	late, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	*w.now = w.now.Add(pairing.DefaultTTL)
	_, err = w.svc.Approve(ctx, w.agent, late.UserCode, "", pairing.ByOwner)
	wantCode(t, err, switchboard.ECONFLICT) // expired
	_, err = w.svc.Deny(ctx, w.agent, late.UserCode, pairing.ByPage)
	wantCode(t, err, switchboard.ECONFLICT)
}

// TestApproveLabels: an approval takes the label given; else a
// re-pairing's the label of the token it replaces; else one from the
// client's name that no token of the agent ever had (a revoked one
// neither) and no approved request holds.
func TestApproveLabels(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	w.peerToken(w.agent, "Barry-Bot")
	kind, label := switchboard.TokenPeer, "Barry-Bot"
	_, err := w.db.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID, Label: &label})
	must(t, err)
	approve := func(req pairing.Request, label string) string {
		t.Helper()
		req.Requester = "192.0.2.1"
		g, err := w.svc.Authorize(ctx, w.agent, req)
		must(t, err)
		p, err := w.svc.Approve(ctx, w.agent, g.UserCode, label, pairing.ByOwner)
		must(t, err)
		return p.Label
	}
	if got := approve(pairing.Request{ClientName: "Barry Bot"}, ""); got != "Barry-Bot-2" {
		t.Fatalf("a revoked label was reused: %q", got)
	}
	if got := approve(pairing.Request{ClientName: "Barry Bot"}, ""); got != "Barry-Bot-3" {
		t.Fatalf("an approved request's label was reused: %q", got)
	}
	if got := approve(pairing.Request{ClientName: "Barry Bot"}, "chosen"); got != "chosen" {
		t.Fatalf("the label given: %q", got)
	}
	bearer := w.peerToken(w.agent, "old-bot")
	if got := approve(pairing.Request{ClientName: "Barry Bot", Bearer: bearer}, ""); got != "old-bot" {
		t.Fatalf("a re-pairing: %q", got)
	}
}
