package hub_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// The names an agent gives of other agents (SendTask, SendMessage,
// SessionOpen) are read against the base URL its connection reached:
// this deployment's addresses name its agents, a URL of another
// deployment is refused, whatever handle its path holds.

// notOnNetwork is the end of the refusal of a URL of another deployment
// for the sending agent "me".
const notOnNetwork = " is not an address of this deployment; the network reaches only agents here: to send to a remote agent, the owner of me sends it: switchboard send --agent me URL --text TEXT"

// netAgent creates a connector agent, approved, in the community lab, and
// returns it with its agent token.
func (s *server) netAgent(handle string) (*switchboard.Agent, string) {
	s.t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: s.owner.ID, Handle: handle, Name: handle,
		Mode: switchboard.ModeConnector, AcceptsTasks: true, Approved: true}
	must(s.t, s.db.CreateAgent(context.Background(), g))
	_, err := s.db.JoinCommunity(context.Background(), g.ID, "lab", true)
	must(s.t, err)
	return g, s.agentToken(g)
}

// tasksOf counts the tasks of an agent.
func (s *server) tasksOf(g *switchboard.Agent) int {
	s.t.Helper()
	tasks, _, err := s.db.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID, NoTotal: true})
	must(s.t, err)
	return len(tasks)
}

// elsewhere returns URLs of worker that are no address of the server at
// base: another host, scheme or port, credentials, a path of this origin
// that is no address.
func elsewhere(t *testing.T, base, handle string) []string {
	host := strings.TrimPrefix(base, "http://")
	_, port, err := net.SplitHostPort(host)
	must(t, err)
	return []string{
		"https://other.example/a/" + handle,
		"https://" + host + "/a/" + handle,
		"http://127.0.0.2:" + port + "/a/" + handle,
		"http://localhost:1/a/" + handle,
		"http://user@" + host + "/a/" + handle,
		base + "/x/a/" + handle,
		base + "/a/" + handle + "/mcp",
	}
}

// TestSendTaskURLOfAnotherDeployment: SendTask to a URL of another
// deployment is invalid params, and nothing is sent; to this
// deployment's address (as the connection reached it), with or without a
// trailing slash, it reaches the agent.
func TestSendTaskURLOfAnotherDeployment(t *testing.T) {
	s := newServer(t)
	_, meToken := s.netAgent("me")
	worker, _ := s.netAgent("worker")
	a := s.connect(meToken)
	send := func(to string) frame {
		return a.call(connproto.MethodSendTask, map[string]any{"to": to, "request": textMessage("hi", true)})
	}
	for _, to := range elsewhere(t, s.srv.URL, "worker") {
		if r := send(to); r.Error == nil || r.Error.Code != connproto.CodeInvalidParams || r.Error.Message != to+notOnNetwork {
			t.Errorf("SendTask to %s: %+v %s", to, r.Error, r.Result)
		}
	}
	if n := s.tasksOf(worker); n != 0 {
		t.Fatalf("%d tasks reached the local agent of the handle, want 0", n)
	}
	for i, to := range []string{s.srv.URL + "/a/worker", s.srv.URL + "/a/Worker/"} {
		r := send(to)
		var res connproto.SendTaskResult
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Agent != "worker" {
			t.Fatalf("SendTask to %s: %+v %s", to, r.Error, r.Result)
		}
		if n := s.tasksOf(worker); n != i+1 {
			t.Fatalf("%d tasks, want %d", n, i+1)
		}
	}
}

// TestSendMessageURLOfAnotherDeployment: SendMessage, with a valid peer
// token of the agent of the handle, to a URL of another deployment is
// invalid params, and nothing is sent.
func TestSendMessageURLOfAnotherDeployment(t *testing.T) {
	s := newServer(t)
	_, meToken := s.netAgent("me")
	other, _ := s.agent("other")
	token := s.peerToken(other, "alice")
	a := s.connect(meToken)
	for i, to := range elsewhere(t, s.srv.URL, "other") {
		r := a.call(connproto.MethodSendMessage, map[string]any{"to": to, "token": token,
			"request": map[string]any{"message": a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}})
		if r.Error == nil || r.Error.Code != connproto.CodeInvalidParams || r.Error.Message != to+notOnNetwork {
			t.Errorf("SendMessage %d to %s: %+v %s", i, to, r.Error, r.Result)
		}
	}
	if n := s.tasksOf(other); n != 0 {
		t.Fatalf("%d tasks reached the local agent of the handle, want 0", n)
	}
}

// TestSessionOpenURLOfAnotherDeployment: SessionOpen to a URL of another
// deployment is "peer not found", and the agent of the handle here is
// never asked; to this deployment's address, the session opens with it,
// its metadata passed on.
func TestSessionOpenURLOfAnotherDeployment(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, aTok := s.agent("wa")
	_, bTok := s.agent("wb")
	a, b := s.connect(aTok), s.connect(bTok)
	for _, to := range elsewhere(t, s.srv.URL, "wb") {
		r := a.call(connproto.MethodSessionOpen, map[string]any{"to": to})
		want := to + " is not an address of this deployment; live sessions are held only with agents connected here"
		if r.Error == nil || r.Error.Code != connproto.CodeSessionPeerNotFound || r.Error.Message != want {
			t.Errorf("SessionOpen to %s: %+v %s", to, r.Error, r.Result)
		}
	}
	// The first offer wb hears is the one to its address.
	res := async(func() frame {
		return a.call(connproto.MethodSessionOpen, json.RawMessage(`{"to": "`+s.srv.URL+`/a/WB/", "metadata": {"k": [1, 2]}}`))
	})
	offer := b.next()
	var o connproto.SessionOffer
	must(t, json.Unmarshal(offer.Params, &o))
	if offer.Method != connproto.MethodSessionOpen || o.From.Handle != "wa" || string(o.Metadata) != `{"k":[1,2]}` {
		t.Fatalf("wb was offered %s %s", offer.Method, offer.Params)
	}
	b.write(map[string]any{"jsonrpc": "2.0", "id": offer.ID, "result": map[string]any{"accepted": true}})
	f := await(t, res)
	var r connproto.SessionOpenResult
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.Peer.Handle != "wb" || r.SessionID != o.SessionID {
		t.Fatalf("SessionOpen to wb's address: %+v %s", f.Error, f.Result)
	}
}

// TestAgentDomainAddress: an agent with a domain is told, in the answer to
// its hello, that its address is the root of its domain (on the scheme its
// connection reached, plain http here); another agent names it by that
// address in SendTask and SendMessage, and an agent domain no agent holds
// names nobody.
func TestAgentDomainAddress(t *testing.T) {
	s := newServer(t)
	_, meToken := s.netAgent("me")
	worker, workerToken := s.netAgent("worker")
	d := "worker.example.com"
	_, err := s.db.UpdateAgent(context.Background(), worker.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)

	w, _, err := s.dial(workerToken)
	must(t, err)
	hello := w.call("hello", map[string]any{"holding": []string{}, "client": "test"})
	var hr connproto.HelloResult
	if hello.Error != nil || json.Unmarshal(hello.Result, &hr) != nil || hr.Agent.Address != "http://worker.example.com" {
		t.Fatalf("hello of an agent with a domain: %+v %s", hello.Error, hello.Result)
	}
	m, _, err := s.dial(meToken)
	must(t, err)
	if hello := m.call("hello", map[string]any{"holding": []string{}, "client": "test"}); !strings.Contains(string(hello.Result), s.srv.URL+"/a/me") {
		t.Fatalf("hello of an agent without one: %s", hello.Result)
	}
	for i, to := range []string{"http://worker.example.com", "https://Worker.Example.com/"} {
		r := m.call(connproto.MethodSendTask, map[string]any{"to": to, "request": textMessage("hi", true)})
		var res connproto.SendTaskResult
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Agent != "worker" {
			t.Fatalf("SendTask to %s: %+v %s", to, r.Error, r.Result)
		}
		if n := s.tasksOf(worker); n != i+1 {
			t.Fatalf("%d tasks, want %d", n, i+1)
		}
	}
	token := s.peerToken(worker, "alice")
	r := m.call(connproto.MethodSendMessage, map[string]any{"to": "https://worker.example.com/", "token": token,
		"request": map[string]any{"message": a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}})
	if r.Error != nil {
		t.Fatalf("SendMessage to the domain: %+v", r.Error)
	}
	for _, to := range []string{"https://nobody.example.com/", "https://worker.example.com/mcp", "https://worker.example.com:8443/"} {
		r := m.call(connproto.MethodSendTask, map[string]any{"to": to, "request": textMessage("hi", true)})
		if r.Error == nil || r.Error.Code != connproto.CodeInvalidParams || r.Error.Message != to+notOnNetwork {
			t.Errorf("SendTask to %s: %+v %s", to, r.Error, r.Result)
		}
	}
}
