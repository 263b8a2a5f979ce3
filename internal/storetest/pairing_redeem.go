package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// redeemAt is when the redemption tests redeem: a minute after the
// request, well before it expires.
const redeemAt = time.Minute

// newPeerToken stores an active peer token of the agent with the label
// and returns it.
func newPeerToken(t *testing.T, s Store, agent *switchboard.Agent, label string) *switchboard.Token {
	t.Helper()
	_, hash := switchboard.NewToken(switchboard.TokenPeer)
	tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: agent.ID, Label: label}
	must(t, s.CreateToken(context.Background(), tok, false))
	return tok
}

// pairingToken returns a new, unstored peer token of the agent.
func pairingToken(agent *switchboard.Agent, label string) *switchboard.Token {
	_, hash := switchboard.NewToken(switchboard.TokenPeer)
	return &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: agent.ID, Label: label}
}

// newRepairing stores a re-pairing request of the agent presenting old,
// approved under old's label.
func newRepairing(t *testing.T, s Store, agent *switchboard.Agent, old *switchboard.Token, at time.Time) {
	t.Helper()
	p := &switchboard.Pairing{DeviceHash: switchboard.HashToken("device-1"), UserCode: "BCDF2345", AgentID: agent.ID,
		ClientName: "Barry", Requester: "192.0.2.1", ReplacesLabel: old.Label, ReplacesHash: old.Hash,
		Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
	must(t, s.CreatePairing(context.Background(), p, switchboard.PairingLimits{}))
	_, err := s.DecidePairing(context.Background(), agent.ID, p.UserCode, switchboard.PairingApproved, old.Label, "owner", at)
	must(t, err)
}

// wantNoToken fails unless no active token has the hash.
func wantNoToken(t *testing.T, s Store, hash string) {
	t.Helper()
	_, err := s.FindTokenByHash(context.Background(), hash)
	wantCode(t, err, switchboard.ENOTFOUND)
}

// testPairingRedeem: only an approved, unexpired request of the agent is
// redeemed, once, and its token is stored with a new peer; a redemption
// that fails on a taken label changes nothing, and the request can be
// redeemed again.
func testPairingRedeem(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "echo")
	other := newAgent(t, s, acct, "other")
	at := time.Now().UTC().Truncate(time.Millisecond)
	device := switchboard.HashToken("device-1")
	newPairing(t, s, g, "device-1", "BCDFGHJK", at)
	redeem := func(agent *switchboard.Agent, tok *switchboard.Token, when time.Time) error {
		return s.RedeemPairing(ctx, agent.ID, device, tok, false, when)
	}
	wantCode(t, redeem(g, pairingToken(g, "barry"), at.Add(redeemAt)), switchboard.ENOTFOUND) // pending
	_, err := s.DecidePairing(ctx, g.ID, "BCDFGHJK", switchboard.PairingApproved, "barry", "owner", at)
	must(t, err)
	if _, poll, err := s.PollPairing(ctx, g.ID, device, at.Add(redeemAt)); err != nil || poll != switchboard.PollApproved {
		t.Fatalf("poll: %s %v, want approved", poll, err)
	}
	wantCode(t, redeem(other, pairingToken(other, "barry"), at.Add(redeemAt)), switchboard.ENOTFOUND)
	wantCode(t, redeem(g, pairingToken(g, "barry"), at.Add(11*time.Minute)), switchboard.ENOTFOUND) // expired

	taken := newPeerToken(t, s, g, "barry")
	clash := pairingToken(g, "barry")
	wantCode(t, redeem(g, clash, at.Add(redeemAt)), switchboard.ECONFLICT)
	wantNoToken(t, s, clash.Hash)
	if _, err := s.FindTokenByHash(ctx, taken.Hash); err != nil {
		t.Fatalf("the token holding the label: %v", err)
	}

	tok := pairingToken(g, "barry-2")
	must(t, redeem(g, tok, at.Add(redeemAt)))
	found, err := s.FindTokenByHash(ctx, tok.Hash)
	must(t, err)
	if found.Label != "barry-2" || found.AgentID != g.ID || found.PeerID == "" || found.PeerID == taken.PeerID || found.PeerID != tok.PeerID {
		t.Fatalf("redeemed token %+v (returned %+v)", found, tok)
	}
	wantCode(t, redeem(g, pairingToken(g, "barry-3"), at.Add(redeemAt)), switchboard.ENOTFOUND) // once
	_, _, err = s.PollPairing(ctx, g.ID, device, at.Add(redeemAt))
	wantCode(t, err, switchboard.ENOTFOUND)
}

// testPairingRedeemReplaced: a re-pairing redeemed with replace revokes
// the token it presented and the new token keeps its label and peer.
func testPairingRedeemReplaced(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "echo")
	at := time.Now().UTC().Truncate(time.Millisecond)
	old := newPeerToken(t, s, g, "barry")
	newRepairing(t, s, g, old, at)
	tok := pairingToken(g, "barry")
	must(t, s.RedeemPairing(ctx, g.ID, switchboard.HashToken("device-1"), tok, true, at.Add(redeemAt)))
	wantNoToken(t, s, old.Hash)
	found, err := s.FindTokenByHash(ctx, tok.Hash)
	must(t, err)
	if found.Label != "barry" || found.PeerID != old.PeerID {
		t.Fatalf("the replacing token %+v, want label barry and peer %s", found, old.PeerID)
	}
}

// testPairingRedeemGone: a re-pairing whose presented token was revoked,
// or rotated, after the approval fails to redeem with replace
// (ECONFLICT): no token is stored, the token holding the label stays,
// and the request stays approved, so it can be redeemed under a fresh
// label.
func testPairingRedeemGone(t *testing.T, s Store) {
	for name, change := range map[string]func(t *testing.T, s Store, g *switchboard.Agent, old *switchboard.Token) *switchboard.Token{
		"Revoked": func(t *testing.T, s Store, g *switchboard.Agent, old *switchboard.Token) *switchboard.Token {
			label := old.Label
			_, err := s.RevokeTokens(context.Background(), switchboard.TokenFilter{AgentID: &g.ID, Label: &label})
			must(t, err)
			return nil
		},
		"Rotated": func(t *testing.T, s Store, g *switchboard.Agent, old *switchboard.Token) *switchboard.Token {
			_, hash := switchboard.NewToken(switchboard.TokenPeer)
			rotated := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: old.Label}
			must(t, s.CreateToken(context.Background(), rotated, true))
			return rotated
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g := newAgent(t, s, newAccount(t, s, "alice-"+name), "echo-"+strings.ToLower(name))
			at := time.Now().UTC().Truncate(time.Millisecond)
			old := newPeerToken(t, s, g, "barry")
			newRepairing(t, s, g, old, at)
			holder := change(t, s, g, old)

			device := switchboard.HashToken("device-1")
			tok := pairingToken(g, "barry")
			wantCode(t, s.RedeemPairing(ctx, g.ID, device, tok, true, at.Add(redeemAt)), switchboard.ECONFLICT)
			wantNoToken(t, s, tok.Hash)
			if holder != nil {
				if _, err := s.FindTokenByHash(ctx, holder.Hash); err != nil {
					t.Fatalf("the rotated token was touched: %v", err)
				}
			}
			if _, poll, err := s.PollPairing(ctx, g.ID, device, at.Add(redeemAt)); err != nil || poll != switchboard.PollApproved {
				t.Fatalf("after the failed redemption: %s %v, want approved", poll, err)
			}
			fresh := pairingToken(g, "barry-2")
			must(t, s.RedeemPairing(ctx, g.ID, device, fresh, false, at.Add(redeemAt)))
			if found, err := s.FindTokenByHash(ctx, fresh.Hash); err != nil || found.PeerID == old.PeerID {
				t.Fatalf("the fresh token %+v, %v: want a new peer", found, err)
			}
		})
	}
}

// testPairingRedeemConcurrent: of several redemptions of one re-pairing
// at once, exactly one wins: one token replaces the presented one and
// the others are told the request is gone (ENOTFOUND), storing nothing.
func testPairingRedeemConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "echo")
	at := time.Now().UTC().Truncate(time.Millisecond)
	old := newPeerToken(t, s, g, "barry")
	newRepairing(t, s, g, old, at)
	toks := make([]*switchboard.Token, 4)
	errs := make([]error, len(toks))
	var wg sync.WaitGroup
	for i := range toks {
		toks[i] = pairingToken(g, "barry")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.RedeemPairing(ctx, g.ID, switchboard.HashToken("device-1"), toks[i], true, at.Add(redeemAt))
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch switchboard.ErrorCode(err) {
		case "":
			won++
			if found, err := s.FindTokenByHash(ctx, toks[i].Hash); err != nil || found.PeerID != old.PeerID {
				t.Fatalf("the winner's token %+v, %v", found, err)
			}
		case switchboard.ENOTFOUND:
			wantNoToken(t, s, toks[i].Hash)
		default:
			t.Fatalf("a losing redemption: %v, want ENOTFOUND", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d redemptions won, want 1", won)
	}
	wantNoToken(t, s, old.Hash)
	kind, active := switchboard.TokenPeer, "barry"
	list, err := s.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &active, Active: true})
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("%d active tokens labelled barry, want 1", len(list))
	}
}
