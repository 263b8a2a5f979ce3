package pairing_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// world is a pairing Service on a SQLite store and a clock the test
// moves (*now), with an account and its agent "echo" in human mode.
type world struct {
	t     *testing.T
	svc   *pairing.Service
	db    *sqlstore.DB
	now   *time.Time
	acct  *switchboard.Account
	agent *switchboard.Agent
	bus   *membus.Bus
}

// newWorld makes a world with the config (its clock set) and a poll
// limiter of polls a minute.
func newWorld(t *testing.T, cfg pairing.Config, polls int) *world {
	t.Helper()
	db := sqlitetest.Open(t)
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	now := time.Now().UTC()
	cfg.Now = func() time.Time { return now }
	w := &world{t: t, db: db, now: &now, bus: bus}
	w.acct = &switchboard.Account{ID: switchboard.NewID(), Name: "alice", CreatedAt: now}
	must(t, db.CreateAccount(context.Background(), w.acct))
	w.agent = w.newAgent("echo")
	log := slog.New(slog.DiscardHandler)
	w.svc = pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, bus, log),
		Polls: ratelimit.NewMemory(polls, time.Minute), Logger: log}, cfg)
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newAgent creates an inbox agent of the account, pairing in human mode.
func (w *world) newAgent(handle string) *switchboard.Agent {
	w.t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: w.acct.ID, Handle: handle, Mode: switchboard.ModeInbox,
		Pairing: switchboard.PairingHuman, CreatedAt: *w.now}
	must(w.t, w.db.CreateAgent(context.Background(), g))
	return g
}

// ask requests a code for the agent from the address.
func (w *world) ask(agent *switchboard.Agent, from string) (*pairing.Grant, error) {
	return w.svc.Authorize(context.Background(), agent, pairing.Request{ClientName: "Barry " + from, Requester: from})
}

// peerToken issues a peer token of the agent with the label.
func (w *world) peerToken(agent *switchboard.Agent, label string) string {
	w.t.Helper()
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	must(w.t, w.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: agent.ID, Label: label}, false))
	return secret
}

// wantCode fails unless err has the code.
func wantCode(t *testing.T, err error, code switchboard.Code) {
	t.Helper()
	if got := switchboard.ErrorCode(err); got != code {
		t.Fatalf("error %v, want code %q", err, code)
	}
}

// wantOAuth fails unless err is the OAuth error code.
func wantOAuth(t *testing.T, err error, code string) *pairing.Error {
	t.Helper()
	var oe *pairing.Error
	if !errors.As(err, &oe) || oe.Code != code {
		t.Fatalf("%v, want the OAuth error %s", err, code)
	}
	return oe
}

// TestAuthorizeFairShare: ten addresses A..J each make requests to one
// agent until refused (by their share of its pending requests, by their
// own limit, or by its full hour), three times ten minutes apart; an
// eleventh address K still gets a code, its request is pending for the
// owner, who approves it, and K redeems its token.
func TestAuthorizeFairShare(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	hourFull := false
	for range 3 {
		for a := range 10 {
			from := fmt.Sprintf("198.51.100.%d", a)
			for taken := 0; ; taken++ {
				_, err := w.ask(w.agent, from)
				if switchboard.ErrorCode(err) == switchboard.ERATELIMITED {
					hourFull = hourFull || strings.Contains(err.Error(), "last hour")
					break
				}
				must(t, err)
				if taken == pairing.DefaultMaxPerRequester {
					t.Fatalf("address %d: more than its share taken", a)
				}
			}
			*w.now = w.now.Add(time.Second)
		}
		*w.now = w.now.Add(pairing.RequesterWindow)
	}
	if !hourFull {
		t.Fatal("A..J did not fill the agent's hour")
	}
	g, err := w.ask(w.agent, "203.0.113.7")
	if err != nil {
		t.Fatalf("K, after A..J took their share: %v", err)
	}
	pending, err := w.svc.Pending(ctx, w.agent)
	must(t, err)
	if len(pending) > pairing.DefaultMaxPending || pending[len(pending)-1].UserCode != g.UserCode {
		t.Fatalf("%d pending, the newest %+v; want K's %s among at most %d", len(pending), pending[len(pending)-1], g.UserCode, pairing.DefaultMaxPending)
	}
	if _, err := w.svc.Approve(ctx, w.agent, g.UserCode, "", pairing.ByOwner); err != nil {
		t.Fatalf("approve K: %v", err)
	}
	tok, err := w.svc.Redeem(ctx, w.agent, g.DeviceCode, "203.0.113.7")
	if err != nil || tok.Secret == "" || tok.Label != "Barry-203-0-113-7" {
		t.Fatalf("K's token: %+v, %v", tok, err)
	}
}

// TestAuthorizeAddressShare: one address holds at most
// DefaultMaxPendingPerRequester pending requests at one agent, and makes
// at most DefaultMaxPerRequester requests in RequesterWindow, to any
// agent; another address is not held back by either.
func TestAuthorizeAddressShare(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	for range pairing.DefaultMaxPendingPerRequester {
		_, err := w.ask(w.agent, "192.0.2.1")
		must(t, err)
	}
	_, err := w.ask(w.agent, "192.0.2.1")
	wantCode(t, err, switchboard.ERATELIMITED)
	if _, err := w.ask(w.agent, "192.0.2.2"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	for i := pairing.DefaultMaxPendingPerRequester; i < pairing.DefaultMaxPerRequester; i++ {
		_, err := w.ask(w.newAgent(fmt.Sprintf("other%d", i)), "192.0.2.1")
		must(t, err)
	}
	last := w.newAgent("last")
	_, err = w.ask(last, "192.0.2.1")
	wantCode(t, err, switchboard.ERATELIMITED)
	*w.now = w.now.Add(pairing.RequesterWindow + time.Second)
	if _, err := w.ask(last, "192.0.2.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// TestAuthorizeChecksCardURL: a claimed card URL that is not https is
// refused, and stores nothing.
func TestAuthorizeChecksCardURL(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	for _, card := range []string{"http://barry.example/card", "https://user:pw@barry.example/card", "javascript:alert(1)"} {
		_, err := w.svc.Authorize(ctx, w.agent, pairing.Request{ClientName: "x", CardURL: card, Requester: "192.0.2.1"})
		wantCode(t, err, switchboard.EINVALID)
	}
	if pending, err := w.svc.Pending(ctx, w.agent); err != nil || len(pending) != 0 {
		t.Fatalf("pending after refusals: %d, %v", len(pending), err)
	}
	if _, err := w.svc.Authorize(ctx, w.agent, pairing.Request{ClientName: "x", CardURL: "https://barry.example/card", Requester: "192.0.2.1"}); err != nil {
		t.Fatalf("an https card URL: %v", err)
	}
}

// TestAuthorizeSweepsDayOld: a new request deletes the requests that
// expired more than KeepExpired ago (with the address they hold): their
// device codes are then unknown; a request expired since less is kept,
// and polls expired_token.
func TestAuthorizeSweepsDayOld(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	old, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	*w.now = w.now.Add(pairing.DefaultTTL + pairing.KeepExpired - time.Second)
	recent, err := w.ask(w.agent, "192.0.2.2")
	must(t, err)
	*w.now = w.now.Add(pairing.DefaultTTL + 2*time.Second)
	_, err = w.svc.Redeem(ctx, w.agent, old.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrExpiredToken) // not swept yet
	_, err = w.ask(w.agent, "192.0.2.3")
	must(t, err)
	_, err = w.svc.Redeem(ctx, w.agent, old.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrInvalidGrant)
	_, err = w.svc.Redeem(ctx, w.agent, recent.DeviceCode, "192.0.2.2")
	wantOAuth(t, err, pairing.ErrExpiredToken)
}

// TestAuthorizeHourFull: past the agent's hourly bound, an address that
// asked it in the hour is refused, and one that did not is taken.
func TestAuthorizeHourFull(t *testing.T) {
	w := newWorld(t, pairing.Config{MaxPerHour: 4}, 60)
	for _, from := range []string{"192.0.2.1", "192.0.2.1", "192.0.2.2", "192.0.2.2"} {
		_, err := w.ask(w.agent, from)
		must(t, err)
	}
	_, err := w.ask(w.agent, "192.0.2.1")
	wantCode(t, err, switchboard.ERATELIMITED)
	if _, err := w.ask(w.agent, "192.0.2.3"); err != nil {
		t.Fatalf("a new address in a full hour: %v", err)
	}
	_, err = w.ask(w.agent, "192.0.2.3")
	wantCode(t, err, switchboard.ERATELIMITED)
	*w.now = w.now.Add(time.Hour + time.Second)
	if _, err := w.ask(w.agent, "192.0.2.1"); err != nil {
		t.Fatalf("an hour later: %v", err)
	}
}

// TestAuthorizeMakesRoom: at the agent's bound of pending requests, a new
// address takes the place of the oldest request of the address holding
// the most, which then polls expired_token; an address holding as many as
// any other is refused.
func TestAuthorizeMakesRoom(t *testing.T) {
	w := newWorld(t, pairing.Config{MaxPending: 3}, 60)
	ctx := context.Background()
	a1, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	*w.now = w.now.Add(time.Second)
	for _, from := range []string{"192.0.2.1", "192.0.2.2"} {
		_, err := w.ask(w.agent, from)
		must(t, err)
	}
	if _, err := w.ask(w.agent, "192.0.2.3"); err != nil {
		t.Fatalf("a new address at the bound: %v", err)
	}
	_, err = w.svc.Redeem(ctx, w.agent, a1.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrExpiredToken)
	if _, err := w.ask(w.agent, "192.0.2.2"); switchboard.ErrorCode(err) != switchboard.ERATELIMITED {
		t.Fatalf("an address holding as many as any other: %v, want ERATELIMITED", err)
	}
	pending, err := w.svc.Pending(ctx, w.agent)
	must(t, err)
	if len(pending) != 3 {
		t.Fatalf("%d pending, want 3", len(pending))
	}
}
