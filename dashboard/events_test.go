package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/accounts"
	"github.com/switchboard-dev/switchboard/dashboard"
)

// stream is an open /dashboard/events.
type stream struct {
	events chan [2]string // event name, data
}

// openStream opens the client's event stream.
func (c *client) openStream() *stream {
	c.h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.h.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.h.srv.URL+"/dashboard/events", nil)
	res, err := c.hc.Do(req)
	if err != nil {
		c.h.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		c.h.t.Fatalf("GET /dashboard/events: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	s := &stream{events: make(chan [2]string, 16)}
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<22)
		var name, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			case line == "" && name != "":
				s.events <- [2]string{name, data}
				name, data = "", ""
			}
		}
	}()
	return s
}

// waitFor returns the HTML of the first agents event whose list holds
// want, within d.
func (s *stream) waitFor(t *testing.T, d time.Duration, want string) string {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("the stream ended before the list held %q", want)
			}
			var v struct{ HTML string }
			if ev[0] == "agents" && json.Unmarshal([]byte(ev[1]), &v) == nil && strings.Contains(v.HTML, want) {
				return v.HTML
			}
		case <-deadline:
			t.Fatalf("no update with %q within %v", want, d)
		}
	}
}

// seen reports whether an agents event whose list holds want comes
// within d.
func (s *stream) seen(d time.Duration, want string) bool {
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return false
			}
			var v struct{ HTML string }
			if ev[0] == "agents" && json.Unmarshal([]byte(ev[1]), &v) == nil && strings.Contains(v.HTML, want) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// TestEventsFollowTheBus: an open page's stream brings the list again
// within a second when an agent connects (relay.ConnectAgent notifies
// its account), is sent a task, and ends when the sign-in does.
func TestEventsFollowTheBus(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	g := h.agent(acct, "helper", "Helper", "")
	c := h.client()
	c.signIn(token)
	s := c.openStream()
	ctx := context.Background()
	now := time.Now()
	session := &switchboard.AgentSession{AgentID: g.ID, Holder: "c1", InstanceID: "i1", ConnectedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := h.relay.ConnectAgent(ctx, g, session, nil); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, time.Second, `class="badge on">live`)

	peer := switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "bob"}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	if _, _, err := h.relay.SendMessage(ctx, g, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, time.Second, `<td class="waiting">1</td>`)

	if err := h.relay.DisconnectAgents(ctx, []string{"c1"}); err != nil {
		t.Fatal(err)
	}
	if err := h.bus.Notify(ctx, switchboard.AccountAgentsSubject(acct.ID)); err != nil { // the hub's hint
		t.Fatal(err)
	}
	s.waitFor(t, time.Second, `class="badge off">offline`)

	// The sign-in ends (13 hours idle): the next update says so, and the
	// stream ends.
	h.advance(13 * time.Hour)
	if err := h.bus.Notify(ctx, switchboard.AccountAgentsSubject(acct.ID)); err != nil {
		t.Fatal(err)
	}
	for ev := range s.events {
		if ev[0] == "signedout" {
			if _, open := <-s.events; open {
				t.Fatal("the stream went on after signedout")
			}
			return
		}
	}
	t.Fatal("the stream ended without signedout")
}

// TestOperatorStreamFollowsNewAccounts: the operator's open page follows
// the agents of an account created after it opened, by the bus, not only
// at the next poll.
func TestOperatorStreamFollowsNewAccounts(t *testing.T) {
	h := newHarness(t, func(_ *dashboard.Deps, cfg *dashboard.Config, _ *harness) { cfg.Poll = time.Hour })
	_, token := h.account("root", switchboard.RoleOperator)
	c := h.client()
	c.signIn(token)
	s := c.openStream()
	ctx := context.Background()
	acct, _, err := accounts.New(h.db, h.db, h.db, h.bus, nil).Create(ctx, "newcomer")
	if err != nil {
		t.Fatal(err)
	}
	g := h.agent(acct, "fresh", "Fresh", "")
	now := time.Now()
	// The new account's agents are watched once the hint of its creation
	// is handled: connect until the page shows the agent live.
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; ; i++ {
		session := &switchboard.AgentSession{AgentID: g.ID, Holder: fmt.Sprint("c", i), InstanceID: "i1", ConnectedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := h.relay.ConnectAgent(ctx, g, session, nil); err != nil {
			t.Fatal(err)
		}
		if s.seen(200*time.Millisecond, `class="badge on">live`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the operator's page did not show the new account's agent live")
		}
	}
}
