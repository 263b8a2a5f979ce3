package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// TestConnectAuthenticationGates: the connector's socket takes the agent
// token as a Bearer credential only, and takes none of an agent whose
// account is disabled.
func TestConnectAuthenticationGates(t *testing.T) {
	s := newServer(t)
	_, tok := s.agent("alice")
	req, err := http.NewRequest(http.MethodGet, s.srv.URL+"/connect", nil)
	must(t, err)
	req.Header.Set("Authorization", "Token "+tok)
	resp, err := s.client.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the agent token under another scheme: HTTP %d, want 401", resp.StatusCode)
	}

	_, err = s.db.UpdateAccount(context.Background(), s.owner.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	if _, resp, err := s.dial(tok); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Fatalf("a disabled account's agent: %v, HTTP %d, want 403", err, code)
	}
}

// TestConnectionClosesWhenItsAgentChanges: a connection whose agent left
// connector mode, or whose session another instance's newer connection
// took over (the store says so; this instance was only hinted), closes.
func TestConnectionClosesWhenItsAgentChanges(t *testing.T) {
	t.Run("Mode", func(t *testing.T) {
		s := newServer(t)
		g, tok := s.agent("alice")
		a := s.connect(tok)
		inbox := switchboard.ModeInbox
		_, err := s.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Mode: &inbox})
		must(t, err)
		must(t, s.bus.Notify(context.Background(), switchboard.AgentChangeSubject(g.ID)))
		if code := a.closed(); code != connproto.CloseGone {
			t.Fatalf("after leaving connector mode: close %d, want %d", code, connproto.CloseGone)
		}
	})
	t.Run("Replaced", func(t *testing.T) {
		s := newServer(t)
		g, tok := s.agent("alice")
		a := s.connect(tok)
		now := time.Now()
		_, err := s.db.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: "elsewhere/conn-9",
			InstanceID: "elsewhere", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
		must(t, err)
		must(t, s.bus.Notify(context.Background(), switchboard.AgentChangeSubject(g.ID)))
		if code := a.closed(); code != connproto.CloseReplaced {
			t.Fatalf("after another instance took the session: close %d, want %d", code, connproto.CloseReplaced)
		}
	})
}

// TestSendMessageGates: an agent's SendMessage on its socket names an
// agent of an enabled account and carries a peer token of that agent: an
// agent token (its own or the target's), another agent's peer token, or a
// target of a disabled account is refused, and the target gets nothing.
func TestSendMessageGates(t *testing.T) {
	s := newServer(t)
	_, tok := s.agent("alice")
	a := s.connect(tok)
	other, otherTok := s.agent("other")
	third, _ := s.agent("third")
	req := func(id string) map[string]any {
		return map[string]any{"message": map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}}
	}
	for name, token := range map[string]string{
		"TheTargetsAgentToken":   otherTok,
		"AnotherAgentsPeerToken": s.peerToken(third, "alice"),
	} {
		if r := a.call(connproto.MethodSendMessage, map[string]any{"to": "other", "token": token, "request": req(name)}); r.Error == nil {
			t.Errorf("%s: accepted: %s", name, r.Result)
		}
	}
	peer := s.peerToken(other, "alice")
	if r := a.call(connproto.MethodSendMessage, map[string]any{"to": "other", "token": peer, "request": req("ok")}); r.Error != nil {
		t.Fatalf("with the target's peer token: %+v", r.Error)
	}
	otherAcct := &switchboard.Account{ID: switchboard.NewID(), Name: "bob", Role: switchboard.RoleOwner}
	must(t, s.db.CreateAccount(context.Background(), otherAcct))
	gone := &switchboard.Agent{ID: switchboard.NewID(), AccountID: otherAcct.ID, Handle: "gone", Name: "gone", Mode: switchboard.ModeConnector, AcceptsTasks: true}
	must(t, s.db.CreateAgent(context.Background(), gone))
	gonePeer := s.peerToken(gone, "alice")
	_, err := s.db.UpdateAccount(context.Background(), otherAcct.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	if r := a.call(connproto.MethodSendMessage, map[string]any{"to": "gone", "token": gonePeer, "request": req("gone")}); r.Error == nil {
		t.Errorf("to a disabled account's agent: accepted: %s", r.Result)
	}
}

// TestSendTaskRateLimited: an agent's SendTask on the network counts
// against its rate limit, as POST /tasks does: past it, the send is
// refused and nothing reaches the receiver.
func TestSendTaskRateLimited(t *testing.T) {
	s := newServer(t)
	s.hub.Limiter = ratelimit.NewMemory(2, time.Minute)
	_, meToken := s.netAgent("me")
	worker, _ := s.netAgent("worker")
	a := s.connect(meToken)
	for i := range 2 {
		if r := a.call(connproto.MethodSendTask, map[string]any{"to": "worker", "request": textMessage(fmt.Sprint("hi ", i), true)}); r.Error != nil {
			t.Fatalf("send %d: %+v", i, r.Error)
		}
	}
	r := a.call(connproto.MethodSendTask, map[string]any{"to": "worker", "request": textMessage("third", true)})
	if r.Error == nil || r.Error.Code != connproto.CodeRateLimited {
		t.Fatalf("a third send in the minute, limit 2: %+v %s", r.Error, r.Result)
	}
	if n := s.tasksOf(worker); n != 2 {
		t.Fatalf("%d tasks reached the worker, want 2", n)
	}
}
