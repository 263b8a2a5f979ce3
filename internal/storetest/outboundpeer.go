package storetest

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// outboundPeerTests cover the synced aliases of agents.
var outboundPeerTests = map[string]func(*testing.T, Store){
	"OutboundPeerPutFindDelete": testOutboundPeerPutFindDelete,
	"OutboundPeerPerAgent":      testOutboundPeerPerAgent,
}

func testOutboundPeerPutFindDelete(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sender")
	if _, err := s.FindOutboundPeer(ctx, g.ID, "bob"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("FindOutboundPeer before a put: %v, want ENOTFOUND", err)
	}
	if _, err := s.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: "no-such-agent", Alias: "bob", URL: "https://b.example", Token: "t"}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("PutOutboundPeer of a missing agent: %v, want ENOTFOUND", err)
	}
	p := &switchboard.OutboundPeer{AgentID: g.ID, Alias: "bob", URL: "https://b.example/a/bob", Token: "sbp_first"}
	created, err := s.PutOutboundPeer(ctx, p)
	must(t, err)
	if !created || p.SyncedAt.IsZero() {
		t.Fatalf("first put: created %v, synced at %v", created, p.SyncedAt)
	}
	first := p.SyncedAt
	created, err = s.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: g.ID, Alias: "bob", URL: "https://b2.example/a/bob", Token: "sbp_second"})
	must(t, err)
	if created {
		t.Fatal("a second put of the alias created it again")
	}
	got, err := s.FindOutboundPeer(ctx, g.ID, "bob")
	must(t, err)
	if got.URL != "https://b2.example/a/bob" || got.Token != "sbp_second" || got.Unreadable || got.SyncedAt.Before(first) {
		t.Fatalf("found %+v", got)
	}
	// Aliases are exact: another case is another alias.
	if _, err := s.FindOutboundPeer(ctx, g.ID, "Bob"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("FindOutboundPeer of Bob: %v, want ENOTFOUND", err)
	}
	_, err = s.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: g.ID, Alias: "alpha.2", URL: "https://a.example", Token: "sbp_a"})
	must(t, err)
	all, err := s.FindOutboundPeers(ctx, g.ID)
	must(t, err)
	if len(all) != 2 || all[0].Alias != "alpha.2" || all[1].Alias != "bob" || all[0].Token != "sbp_a" {
		t.Fatalf("listed %+v", all)
	}
	must(t, s.DeleteOutboundPeer(ctx, g.ID, "bob"))
	if err := s.DeleteOutboundPeer(ctx, g.ID, "bob"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("deleting it again: %v, want ENOTFOUND", err)
	}
	if all, err = s.FindOutboundPeers(ctx, g.ID); err != nil || len(all) != 1 {
		t.Fatalf("after delete: %+v, %v", all, err)
	}
}

// testOutboundPeerPerAgent: an alias belongs to one agent; deleting the
// agent deletes its aliases and no other's.
func testOutboundPeerPerAgent(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	one, two := newAgent(t, s, acct, "one"), newAgent(t, s, acct, "two")
	for _, g := range []*switchboard.Agent{one, two} {
		_, err := s.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: g.ID, Alias: "bob", URL: "https://b.example", Token: "sbp_" + g.Handle})
		must(t, err)
	}
	got, err := s.FindOutboundPeer(ctx, two.ID, "bob")
	must(t, err)
	if got.Token != "sbp_two" {
		t.Fatalf("two's bob holds %q", got.Token)
	}
	if err := s.DeleteOutboundPeer(ctx, one.ID, "nobody"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("deleting a missing alias: %v", err)
	}
	must(t, s.DeleteAgent(ctx, one.ID))
	if all, err := s.FindOutboundPeers(ctx, one.ID); err != nil || len(all) != 0 {
		t.Fatalf("a deleted agent's aliases: %+v, %v", all, err)
	}
	if _, err := s.FindOutboundPeer(ctx, two.ID, "bob"); err != nil {
		t.Fatalf("the other agent's alias after the delete: %v", err)
	}
}
