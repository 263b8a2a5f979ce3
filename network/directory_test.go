package network_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
)

// TestDirectoryNeedsApproval: an agent that may not send on the network
// (unapproved, or of a disabled account) may not read its directory
// either; and an owner whose agents in a community all wait for approval
// neither sees that community's members nor issues its peer tokens.
func TestDirectoryNeedsApproval(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.agent("mate", "code", "lab")
	other := &switchboard.Account{ID: switchboard.NewID(), Name: "other", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, other))
	newcomer := w.agentOf(other, "newcomer", "", "lab")
	w.update(newcomer, switchboard.AgentUpdate{Approved: new(false)})
	newcomer, err := w.db.FindAgentByID(ctx, newcomer.ID)
	must(t, err)

	if _, err := w.net.Directory(ctx, network.Viewer{Agent: newcomer}, network.DirectoryQuery{}); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an unapproved agent reads the directory: %v", err)
	}
	ms, err := w.net.Directory(ctx, network.Viewer{Account: other}, network.DirectoryQuery{})
	if err != nil || len(ms) != 0 {
		t.Fatalf("the owner of an unapproved agent reads %d members (%v)", len(ms), err)
	}
	if _, err := w.net.Directory(ctx, network.Viewer{Account: other}, network.DirectoryQuery{Community: "lab"}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the owner of an unapproved agent names its community: %v", err)
	}
	if ok, err := w.net.ManagesCommunity(ctx, other, "lab"); ok || err != nil {
		t.Fatalf("the owner of an unapproved agent manages its community: %v %v", ok, err)
	}

	// Approved, both read it.
	w.update(newcomer, switchboard.AgentUpdate{Approved: new(true)})
	newcomer, err = w.db.FindAgentByID(ctx, newcomer.ID)
	must(t, err)
	if ms, err := w.net.Directory(ctx, network.Viewer{Agent: newcomer}, network.DirectoryQuery{}); err != nil || len(ms) != 1 {
		t.Fatalf("the approved agent's directory: %d members (%v)", len(ms), err)
	}
	if ms, err := w.net.Directory(ctx, network.Viewer{Account: other}, network.DirectoryQuery{}); err != nil || len(ms) != 2 {
		t.Fatalf("its owner's directory: %d members (%v)", len(ms), err)
	}
	if ok, err := w.net.ManagesCommunity(ctx, other, "lab"); !ok || err != nil {
		t.Fatalf("its owner does not manage lab: %v", err)
	}

	// Of a disabled account, the agent reads nothing.
	_, err = w.db.UpdateAccount(ctx, other.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	newcomer, err = w.db.FindAgentByID(ctx, newcomer.ID)
	must(t, err)
	if _, err := w.net.Directory(ctx, network.Viewer{Agent: newcomer}, network.DirectoryQuery{}); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an agent of a disabled account reads the directory: %v", err)
	}
}
