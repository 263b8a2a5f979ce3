package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var signInTests = map[string]func(*testing.T, Store){
	"SignInCreateFindTouchDelete": testSignIns,
	"AgentGlances":                testAgentGlances,
}

// testSignIns: a sign-in is found by its hash while seen recently enough
// and created recently enough, a touch moves its idle clock and not its
// age, and sign-out, idle expiry or age forgets it.
func testSignIns(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	now := time.Now().UTC().Truncate(time.Millisecond)
	in := &switchboard.SignIn{Hash: switchboard.HashToken("cookie-1"), AccountID: acct.ID, TokenHash: "th",
		CSRF: "csrf-1", CreatedAt: now, SeenAt: now}
	must(t, s.CreateSignIn(ctx, in))
	got, err := s.FindSignIn(ctx, in.Hash, now.Add(-time.Hour), now.Add(-time.Hour))
	must(t, err)
	if got.AccountID != acct.ID || got.TokenHash != "th" || got.CSRF != "csrf-1" || !got.CreatedAt.Equal(now) || !got.SeenAt.Equal(now) {
		t.Fatalf("found %+v, want %+v", got, in)
	}
	_, err = s.FindSignIn(ctx, in.Hash, now.Add(time.Second), time.Time{})
	wantCode(t, err, switchboard.ENOTFOUND) // idle too long
	_, err = s.FindSignIn(ctx, in.Hash, time.Time{}, now.Add(time.Second))
	wantCode(t, err, switchboard.ENOTFOUND) // older than its lifetime
	_, err = s.FindSignIn(ctx, "no-such-hash", now.Add(-time.Hour), now.Add(-time.Hour))
	wantCode(t, err, switchboard.ENOTFOUND)

	must(t, s.TouchSignIn(ctx, in.Hash, now.Add(time.Minute)))
	must(t, s.TouchSignIn(ctx, in.Hash, now)) // never back in time
	if got, err = s.FindSignIn(ctx, in.Hash, now.Add(30*time.Second), now); err != nil || !got.SeenAt.Equal(now.Add(time.Minute)) ||
		!got.CreatedAt.Equal(now) {
		t.Fatalf("after the touch: %+v %v", got, err)
	}
	_, err = s.FindSignIn(ctx, in.Hash, now.Add(30*time.Second), now.Add(time.Second))
	wantCode(t, err, switchboard.ENOTFOUND) // a touch makes it no younger

	idle := &switchboard.SignIn{Hash: switchboard.HashToken("cookie-2"), AccountID: acct.ID, TokenHash: "th",
		CSRF: "csrf-2", CreatedAt: now.Add(-13 * time.Hour), SeenAt: now.Add(-13 * time.Hour)}
	must(t, s.CreateSignIn(ctx, idle))
	old := &switchboard.SignIn{Hash: switchboard.HashToken("cookie-3"), AccountID: acct.ID, TokenHash: "th",
		CSRF: "csrf-3", CreatedAt: now.Add(-8 * 24 * time.Hour), SeenAt: now}
	must(t, s.CreateSignIn(ctx, old))
	n, err := s.DeleteSignIns(ctx, now.Add(-12*time.Hour), now.Add(-7*24*time.Hour))
	must(t, err)
	if n != 2 {
		t.Fatalf("forgot %d idle or old sign-ins, want 2", n)
	}
	for _, gone := range []*switchboard.SignIn{idle, old} {
		_, err = s.FindSignIn(ctx, gone.Hash, time.Time{}, time.Time{})
		wantCode(t, err, switchboard.ENOTFOUND)
	}
	if _, err = s.FindSignIn(ctx, in.Hash, time.Time{}, time.Time{}); err != nil {
		t.Fatalf("a recent sign-in was forgotten with the idle and old: %v", err)
	}

	must(t, s.DeleteSignIn(ctx, in.Hash))
	must(t, s.DeleteSignIn(ctx, in.Hash))
	_, err = s.FindSignIn(ctx, in.Hash, time.Time{}, time.Time{})
	wantCode(t, err, switchboard.ENOTFOUND)
}

// testAgentGlances: an account's agents with their session expiry,
// waiting tasks and newest task; every agent for the empty account.
func testAgentGlances(t *testing.T, s Store) {
	ctx := context.Background()
	alice, bob := newAccount(t, s, "alice"), newAccount(t, s, "bob")
	busy, quiet, other := newAgent(t, s, alice, "busy"), newAgent(t, s, alice, "quiet"), newAgent(t, s, bob, "other")
	now := time.Now().UTC().Truncate(time.Millisecond)
	queueTask(t, s, busy, "m1", now.Add(-2*time.Second))
	last, _ := queueTask(t, s, busy, "m2", now.Add(-time.Second))
	_, _, err := s.ModifyTask(ctx, last.ID(), func(task *switchboard.Task) (*switchboard.TaskChange, error) {
		task.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
		return &switchboard.TaskChange{}, nil
	})
	must(t, err)
	_, err = s.OpenSession(ctx, &switchboard.AgentSession{AgentID: busy.ID, Holder: "conn-1", InstanceID: "i1",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
	must(t, err)

	got, err := s.FindAgentGlances(ctx, alice.ID)
	must(t, err)
	if len(got) != 2 || got[0].Handle != "busy" || got[1].Handle != "quiet" {
		t.Fatalf("glances of alice's agents: %v", got)
	}
	b := got[0]
	if b.ID != busy.ID || b.AccountID != alice.ID || b.Name != busy.Name || b.Mode != busy.Mode || !b.AcceptsTasks || b.Approved != busy.Approved ||
		b.Waiting != 1 || !b.LastTaskAt.Equal(now.Add(-time.Second)) || !b.SessionExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("busy: %+v", b)
	}
	if q := got[1]; q.ID != quiet.ID || q.Waiting != 0 || !q.LastTaskAt.IsZero() || !q.SessionExpiresAt.IsZero() {
		t.Fatalf("quiet: %+v", q)
	}
	all, err := s.FindAgentGlances(ctx, "")
	must(t, err)
	if len(all) != 3 || all[1].ID != other.ID {
		t.Fatalf("every agent's glance: %v", all)
	}
}
