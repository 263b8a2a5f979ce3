package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var pairingTests = map[string]func(*testing.T, Store){
	"PairingCreateFindDecide":  testPairings,
	"PairingPoll":              testPairingPoll,
	"PairingLimits":            testPairingLimits,
	"PairingLimitsOutliveRows": testPairingLimitsOutliveRows,
	"PairingFairShare":         testPairingFairShare,
	"PairingDecideConcurrent":  testPairingDecideConcurrent,
	"PairingRedeem":            testPairingRedeem,
	"PairingRedeemReplaced":    testPairingRedeemReplaced,
	"PairingRedeemGone":        testPairingRedeemGone,
	"PairingRedeemConcurrent":  testPairingRedeemConcurrent,
}

// newPairing stores a pending request of the agent with the codes.
func newPairing(t *testing.T, s Store, agent *switchboard.Agent, device, user string, at time.Time) *switchboard.Pairing {
	t.Helper()
	p := &switchboard.Pairing{DeviceHash: switchboard.HashToken(device), UserCode: user, AgentID: agent.ID,
		ClientName: "Barry", ClientID: "barry-bot", CardURL: "https://barry.example/card", Requester: "192.0.2.1",
		Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
	must(t, s.CreatePairing(context.Background(), p, switchboard.PairingLimits{}))
	return p
}

// testPairings: a request is found by its user code on its agent only,
// listed while live, decided once, and swept a while after it expired;
// the agent's pairing mode defaults to human and can change.
func testPairings(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "echo")
	other := newAgent(t, s, acct, "other")
	if g.Pairing != switchboard.PairingHuman {
		t.Fatalf("a new agent's pairing mode is %q, want human", g.Pairing)
	}
	off := switchboard.PairingOff
	upd, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Pairing: &off})
	must(t, err)
	if found, _ := s.FindAgentByID(ctx, g.ID); upd.Pairing != off || found.Pairing != off {
		t.Fatalf("pairing after the update: %q, found %q", upd.Pairing, found.Pairing)
	}

	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newPairing(t, s, g, "device-1", "BCDF2345", now)
	dup := *p
	dup.DeviceHash = switchboard.HashToken("device-2")
	wantCode(t, s.CreatePairing(ctx, &dup, switchboard.PairingLimits{}), switchboard.ECONFLICT)

	got, err := s.FindPairingByUserCode(ctx, g.ID, "BCDF2345")
	must(t, err)
	if got.ClientName != "Barry" || got.Status != switchboard.PairingPending || got.Interval != 5*time.Second ||
		!got.ExpiresAt.Equal(p.ExpiresAt) || got.LastPollAt != nil || got.DeviceHash != p.DeviceHash {
		t.Fatalf("found %+v", got)
	}
	_, err = s.FindPairingByUserCode(ctx, other.ID, "BCDF2345")
	wantCode(t, err, switchboard.ENOTFOUND)

	live := now.Add(time.Minute)
	list, err := s.FindPairings(ctx, switchboard.PairingFilter{AgentID: g.ID, LiveAt: &live})
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("listed %d live requests, want 1", len(list))
	}
	late := now.Add(11 * time.Minute)
	if list, _ = s.FindPairings(ctx, switchboard.PairingFilter{AgentID: g.ID, LiveAt: &late}); len(list) != 0 {
		t.Fatalf("listed %d requests after expiry, want 0", len(list))
	}

	_, err = s.DecidePairing(ctx, other.ID, "BCDF2345", switchboard.PairingApproved, "barry", "owner", now)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.DecidePairing(ctx, g.ID, "BCDF2345", switchboard.PairingApproved, "barry", "owner", late)
	wantCode(t, err, switchboard.ECONFLICT) // expired
	d, err := s.DecidePairing(ctx, g.ID, "BCDF2345", switchboard.PairingApproved, "barry", "owner", now)
	must(t, err)
	if d.Status != switchboard.PairingApproved || d.Label != "barry" || d.DecidedBy != "owner" {
		t.Fatalf("decided %+v", d)
	}
	_, err = s.DecidePairing(ctx, g.ID, "BCDF2345", switchboard.PairingDenied, "", "page", now)
	wantCode(t, err, switchboard.ECONFLICT)
	approved := switchboard.PairingApproved
	if list, _ = s.FindPairings(ctx, switchboard.PairingFilter{AgentID: g.ID, Status: &approved}); len(list) != 1 || list[0].Label != "barry" {
		t.Fatalf("approved requests: %+v", list)
	}

	n, err := s.DeletePairings(ctx, now.Add(10*time.Minute))
	must(t, err)
	if n != 0 {
		t.Fatalf("swept %d requests before expiry", n)
	}
	if n, err = s.DeletePairings(ctx, now.Add(25*time.Hour)); err != nil || n != 1 {
		t.Fatalf("swept %d, %v; want 1", n, err)
	}
	_, err = s.FindPairingByUserCode(ctx, g.ID, "BCDF2345")
	wantCode(t, err, switchboard.ENOTFOUND)

	newPairing(t, s, g, "device-3", "BCDF2346", now)
	must(t, s.DeleteAgent(ctx, g.ID))
	_, _, err = s.PollPairing(ctx, g.ID, switchboard.HashToken("device-3"), now)
	wantCode(t, err, switchboard.ENOTFOUND) // deleted with its agent
}

// testPairingPoll: polls answer pending, slow_down (raising the interval
// for good), expired_token, access_denied once, and approved until the
// request is redeemed.
func testPairingPoll(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "echo")
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := newPairing(t, s, g, "device-1", "BCDF2345", now)
	poll := func(device string, at time.Time, want switchboard.PairingPoll) *switchboard.Pairing {
		t.Helper()
		got, outcome, err := s.PollPairing(ctx, g.ID, switchboard.HashToken(device), at)
		must(t, err)
		if outcome != want {
			t.Fatalf("poll at %v: %s, want %s", at.Sub(now), outcome, want)
		}
		return got
	}
	poll("device-1", now, switchboard.PollPending)
	if got := poll("device-1", now.Add(2*time.Second), switchboard.PollSlowDown); got.Interval != 10*time.Second {
		t.Fatalf("interval after a slow_down: %v, want 10s", got.Interval)
	}
	poll("device-1", now.Add(8*time.Second), switchboard.PollSlowDown) // 6 s < 10 s: now 15 s
	if got := poll("device-1", now.Add(25*time.Second), switchboard.PollPending); got.Interval != 15*time.Second {
		t.Fatalf("interval: %v, want 15s for good", got.Interval)
	}
	poll("device-1", p.ExpiresAt, switchboard.PollExpired)
	poll("device-1", p.ExpiresAt.Add(time.Hour), switchboard.PollExpired)

	newPairing(t, s, g, "device-2", "BCDF2346", now)
	_, err := s.DecidePairing(ctx, g.ID, "BCDF2346", switchboard.PairingDenied, "", "owner", now)
	must(t, err)
	poll("device-2", now.Add(time.Minute), switchboard.PollDenied)
	_, _, err = s.PollPairing(ctx, g.ID, switchboard.HashToken("device-2"), now.Add(2*time.Minute))
	wantCode(t, err, switchboard.ENOTFOUND)
	other := newAgent(t, s, newAccount(t, s, "bob"), "other")
	_, _, err = s.PollPairing(ctx, other.ID, switchboard.HashToken("device-1"), now)
	wantCode(t, err, switchboard.ENOTFOUND) // another agent's device code

	newPairing(t, s, g, "device-3", "BCDF2347", now)
	_, err = s.DecidePairing(ctx, g.ID, "BCDF2347", switchboard.PairingApproved, "barry", "owner", now)
	must(t, err)
	if got := poll("device-3", now.Add(time.Minute), switchboard.PollApproved); got.Label != "barry" {
		t.Fatalf("approved %+v", got)
	}
	poll("device-3", now.Add(time.Minute), switchboard.PollApproved) // until redeemed
	must(t, s.RedeemPairing(ctx, g.ID, switchboard.HashToken("device-3"), pairingToken(g, "barry"), false, now.Add(time.Minute)))
	_, _, err = s.PollPairing(ctx, g.ID, switchboard.HashToken("device-3"), now.Add(2*time.Minute))
	wantCode(t, err, switchboard.ENOTFOUND) // single use
}

// testPairingLimits: the pending and hourly bounds count the agent's own
// requests only.
func testPairingLimits(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "echo")
	other := newAgent(t, s, acct, "other")
	now := time.Now().UTC().Truncate(time.Millisecond)
	lim := switchboard.PairingLimits{MaxPending: 2, MaxPerHour: 3}
	create := func(agent *switchboard.Agent, n int, at time.Time) error {
		p := &switchboard.Pairing{DeviceHash: switchboard.HashToken("d" + string(rune('a'+n))), UserCode: "CODE000" + string(rune('a'+n)),
			AgentID: agent.ID, Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
		return s.CreatePairing(ctx, p, lim)
	}
	must(t, create(g, 0, now))
	must(t, create(g, 1, now))
	wantCode(t, create(g, 2, now), switchboard.ERATELIMITED) // two pending
	must(t, create(other, 3, now))
	_, err := s.DecidePairing(ctx, g.ID, "CODE000a", switchboard.PairingDenied, "", "owner", now)
	must(t, err)
	must(t, create(g, 4, now)) // one pending again
	_, err = s.DecidePairing(ctx, g.ID, "CODE000b", switchboard.PairingDenied, "", "owner", now)
	must(t, err)
	wantCode(t, create(g, 5, now), switchboard.ERATELIMITED) // three this hour
	must(t, create(g, 6, now.Add(61*time.Minute)))           // a new hour; the others expired

	// One address: at most two requests in ten minutes, to any agent.
	perAddress := switchboard.PairingLimits{MaxPerRequester: 2, RequesterWindow: 10 * time.Minute}
	from := func(n int, agent *switchboard.Agent, at time.Time) error {
		p := &switchboard.Pairing{DeviceHash: switchboard.HashToken("r" + string(rune('a'+n))), UserCode: "ADDR000" + string(rune('a'+n)),
			AgentID: agent.ID, Requester: "198.51.100.7", Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
		return s.CreatePairing(ctx, p, perAddress)
	}
	must(t, from(0, g, now))
	must(t, from(1, other, now))
	wantCode(t, from(2, other, now.Add(time.Minute)), switchboard.ERATELIMITED)
	must(t, from(3, g, now.Add(11*time.Minute)))

	wantCode(t, s.CreatePairing(ctx, &switchboard.Pairing{DeviceHash: "x", UserCode: "NOAGENT1", AgentID: "nope",
		CreatedAt: now, ExpiresAt: now.Add(time.Minute)}, lim), switchboard.ENOTFOUND)
}

// testPairingLimitsOutliveRows: a request still counts against the hourly
// and per-address limits once its row is gone (denied and the denial
// reported: anyone may deny on the /device page), until the sweep of the
// day-old; the agent's full hour still takes an address's first request
// in it; deleting the agent deletes its counts.
func testPairingLimitsOutliveRows(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "echo")
	now := time.Now().UTC().Truncate(time.Millisecond)
	lim := switchboard.PairingLimits{MaxPending: 5, MaxPerHour: 4, MaxPerRequester: 3, RequesterWindow: 10 * time.Minute}
	create := func(n int, requester string, at time.Time) error {
		p := &switchboard.Pairing{DeviceHash: switchboard.HashToken("o" + string(rune('a'+n))), UserCode: "GONE000" + string(rune('a'+n)),
			AgentID: g.ID, Requester: requester, Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
		if err := s.CreatePairing(ctx, p, lim); err != nil {
			return err
		}
		// The requester denies its own request and polls: the row is deleted.
		_, err := s.DecidePairing(ctx, g.ID, p.UserCode, switchboard.PairingDenied, "", "page", at)
		must(t, err)
		_, outcome, err := s.PollPairing(ctx, g.ID, p.DeviceHash, at.Add(time.Second))
		must(t, err)
		if outcome != switchboard.PollDenied {
			t.Fatalf("poll after the denial: %s", outcome)
		}
		return nil
	}
	for n := range 3 {
		must(t, create(n, "198.51.100.9", now))
	}
	wantCode(t, create(3, "198.51.100.9", now), switchboard.ERATELIMITED) // the address's three, their rows gone
	must(t, create(4, "203.0.113.5", now))
	wantCode(t, create(5, "203.0.113.5", now), switchboard.ERATELIMITED) // the agent's four this hour
	must(t, create(7, "203.0.113.6", now))                               // but a new address's first
	if live, err := s.FindPairings(ctx, switchboard.PairingFilter{AgentID: g.ID}); err != nil || len(live) != 0 {
		t.Fatalf("rows left: %d, %v", len(live), err)
	}

	later := now.Add(25 * time.Hour)
	_, err := s.DeletePairings(ctx, later.Add(-24*time.Hour))
	must(t, err)
	must(t, create(6, "198.51.100.9", later))
	must(t, s.DeleteAgent(ctx, g.ID))
}

// testPairingFairShare: each address holds at most its share of an
// agent's pending requests; at the agent's bound, a request from an
// address holding fewer than another makes the oldest request of the
// address holding the most expire; past the agent's hourly bound, only an
// address that has not asked in the hour is taken.
func testPairingFairShare(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "echo")
	now := time.Now().UTC().Truncate(time.Millisecond)
	lim := switchboard.PairingLimits{MaxPending: 4, MaxPendingPerRequester: 2, MaxPerHour: 6, MaxPerRequester: 3, RequesterWindow: 10 * time.Minute}
	n := 0
	ask := func(from string) (string, error) {
		n++
		code := fmt.Sprintf("FAIR%04d", n)
		at := now.Add(time.Duration(n) * time.Millisecond)
		return code, s.CreatePairing(ctx, &switchboard.Pairing{DeviceHash: switchboard.HashToken(code), UserCode: code, AgentID: g.ID,
			Requester: from, Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}, lim)
	}
	take := func(from string) string {
		t.Helper()
		code, err := ask(from)
		must(t, err)
		return code
	}
	refuse := func(from string) {
		t.Helper()
		_, err := ask(from)
		wantCode(t, err, switchboard.ERATELIMITED)
	}
	a1, a2 := take("A"), take("A")
	refuse("A") // its share
	b1, b2 := take("B"), take("B")
	c1 := take("C") // A's oldest makes room
	c2 := take("C") // then B's
	refuse("C")     // its share
	d1 := take("D") // the hour is full, but D's first: C's oldest makes room
	refuse("D")     // D asked this hour
	refuse("A")
	e1 := take("E") // every address holds one: the oldest of them makes room
	end := now.Add(time.Minute)
	pending := switchboard.PairingPending
	live, err := s.FindPairings(ctx, switchboard.PairingFilter{AgentID: g.ID, Status: &pending, LiveAt: &end})
	must(t, err)
	var got []string
	for _, p := range live {
		got = append(got, p.UserCode)
	}
	if want := []string{b2, c2, d1, e1}; !slices.Equal(got, want) {
		t.Fatalf("pending %v, want %v", got, want)
	}
	for _, code := range []string{a1, a2, b1, c1} {
		_, poll, err := s.PollPairing(ctx, g.ID, switchboard.HashToken(code), end)
		must(t, err)
		if poll != switchboard.PollExpired {
			t.Fatalf("a request that made room: %s, want expired", poll)
		}
	}
}

// testPairingDecideConcurrent: of two decisions at once, one wins and the
// other is told the request was decided meanwhile.
func testPairingDecideConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "echo")
	now := time.Now().UTC().Truncate(time.Millisecond)
	newPairing(t, s, g, "device-1", "BCDF2345", now)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := switchboard.PairingApproved
			if i%2 == 1 {
				status = switchboard.PairingDenied
			}
			_, errs[i] = s.DecidePairing(ctx, g.ID, "BCDF2345", status, "barry", "owner", now)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if switchboard.ErrorCode(err) != switchboard.ECONFLICT {
			t.Fatalf("a losing decision: %v, want conflict", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions won, want 1", won)
	}
}
