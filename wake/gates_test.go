package wake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// TestApplyUpdateRefusesOutOfBounds: a wake configuration is refused
// (EINVALID) for a URL that is not http(s), names a local interface, or
// for settings outside their bounds: the debounce, the hourly cap, the
// secrets' length, Hermes without its HMAC secret, a CLI command a header
// cannot carry.
func TestApplyUpdateRefusesOutOfBounds(t *testing.T) {
	now := time.Now()
	u := func(s string) *string { return &s }
	hermes := wake.PresetHermes
	for name, upd := range map[string]wake.Update{
		"ftp scheme":        {URL: u("ftp://w.example/fire")},
		"ipv6 zone":         {URL: u("https://[fe80::1%25eth0]/fire")},
		"negative debounce": {Debounce: ptr(-time.Second)},
		"debounce too long": {Debounce: ptr(wake.MaxDebounce + time.Second)},
		"negative cap":      {MaxPerHour: ptr(-1)},
		"cap too high":      {MaxPerHour: ptr(wake.MaxPerHourCap + 1)},
		"key too long":      {Key: u(strings.Repeat("k", wake.MaxSecretLen+1))},
		"hmac too long":     {HMACSecret: u(strings.Repeat("k", wake.MaxSecretLen+1))},
		"hermes no hmac":    {Preset: &hermes},
		"cli newline":       {CLICommand: u("switchboard\nrm -rf /")},
		"cli too long":      {CLICommand: u(strings.Repeat("s", 201))},
	} {
		if upd.URL == nil {
			upd.URL = u("https://w.example/fire")
		}
		if _, err := wake.ApplyUpdate("a1", nil, upd, now, nil); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	if _, err := wake.ApplyUpdate("a1", nil, wake.Update{URL: u("https://w.example/fire"), Preset: &hermes, HMACSecret: u("s3cret")}, now, nil); err != nil {
		t.Errorf("hermes with its secret: %v", err)
	}
}

// TestSetConfigChecksScheme: the service refuses to keep a plain http
// wake URL unless plain http is allowed.
func TestSetConfigChecksScheme(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	plain := "http://w.example/fire"
	if _, err := q.wakes.SetConfig(context.Background(), q.agent, wake.Update{URL: &plain}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("a plain http wake URL kept: %v", err)
	}
	q.wakes.AllowHTTP = true
	if _, err := q.wakes.SetConfig(context.Background(), q.agent, wake.Update{URL: &plain}); err != nil {
		t.Fatalf("plain http allowed: %v", err)
	}
}

// TestStoredURLWithCredentialsRefused: a configuration that reached the
// store with credentials in its URL (written by hand, or by an older
// version) is refused when sent: nothing reaches the receiver.
func TestStoredURLWithCredentialsRefused(t *testing.T) {
	rc := newReceiver(t)
	c := config(t, rc, wake.PresetGeneric, wake.Update{})
	c.URL = strings.Replace(rc.URL, "http://", "http://user:pass@", 1) + "/hook"
	if _, err := newSender(loopbackOnly).Wake(context.Background(), sleeper, c, sampleWake()); !errors.Is(err, wake.ErrRefused) {
		t.Fatalf("a wake to a URL with credentials: %v, want a refusal", err)
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("the receiver got %d wakes", n)
	}
}

// TestAnswerKeptPrintable: a receiver's answer is kept without terminal
// escapes or other control characters.
func TestAnswerKeptPrintable(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	rc := newReceiver(t, answer{status: 400, body: "bad \x1b[2J\x1b]0;owned\x07 \r done"})
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
	q.send(t, "c1", "", "hello")
	q.sendDue(t)
	ws := q.wakesOf(t)
	if len(ws) != 1 || ws[0].State != switchboard.WakeFailed {
		t.Fatalf("wakes %+v", ws)
	}
	if e := ws[0].LastError; strings.ContainsAny(e, "\x1b\x07\r") {
		t.Fatalf("last error %q holds control characters", e)
	}
}

// TestNormalizeNeedsAgentAndContext: a wake request without an agent or a
// context is refused.
func TestNormalizeNeedsAgentAndContext(t *testing.T) {
	for name, r := range map[string]switchboard.WakeRequest{
		"no agent":   {ContextID: "c1", Kind: switchboard.WakeInbound},
		"no context": {AgentID: "a1", Kind: switchboard.WakeInbound},
	} {
		if err := wake.Normalize(&r); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// goneAgents is an AgentStore in which every agent is gone: an agent
// deleted between the claim of its wake and the attempt.
type goneAgents struct{ switchboard.AgentStore }

func (goneAgents) FindAgentByID(context.Context, string) (*switchboard.Agent, error) {
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
}

// TestWakeOfAGoneOrDisabledAgentDropped: a queued wake whose agent is gone
// by the time of its attempt, or whose account was disabled, is dropped:
// it is neither sent nor tried again.
func TestWakeOfAGoneOrDisabledAgentDropped(t *testing.T) {
	for _, gone := range []string{"deleted", "disabled"} {
		t.Run(gone, func(t *testing.T) {
			q := newQueue(t, switchboard.ModeInbox)
			ctx := context.Background()
			rc := newReceiver(t)
			q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
			q.send(t, "c1", "", "hello")
			ws := q.wakesOf(t)
			if len(ws) != 1 {
				t.Fatalf("%d wakes queued", len(ws))
			}
			if gone == "deleted" {
				q.wakes = wake.NewService(q.db, goneAgents{q.db}, q.bus, newSender(loopbackOnly), quiet)
				q.wakes.Now = q.clock.Now
			} else {
				_, err := q.db.UpdateAccount(ctx, q.agent.AccountID, switchboard.AccountUpdate{Disabled: ptr(true)})
				must(t, err)
			}
			q.sendDue(t)
			if n := len(rc.requests()); n != 0 {
				t.Fatalf("the receiver got %d wakes", n)
			}
			after := q.wakesOf(t)
			if len(after) != 1 || after[0].ID != ws[0].ID || after[0].State != switchboard.WakeDropped {
				t.Fatalf("wakes %+v, want the one dropped", after[0])
			}
		})
	}
}
