package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
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
}
