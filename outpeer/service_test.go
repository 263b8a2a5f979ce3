package outpeer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/outpeer"
)

// peers is an OutboundPeerStore of one agent's aliases, n of them, each
// found whatever its alias.
type peers struct {
	switchboard.OutboundPeerStore
	n   int
	put int
}

func (p *peers) FindOutboundPeer(ctx context.Context, agentID, alias string) (*switchboard.OutboundPeer, error) {
	if alias == "new" {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no alias")
	}
	return &switchboard.OutboundPeer{AgentID: agentID, Alias: alias, URL: "https://remote.example.com", Token: "tok"}, nil
}

func (p *peers) FindOutboundPeers(ctx context.Context, agentID string) ([]*switchboard.OutboundPeer, error) {
	out := make([]*switchboard.OutboundPeer, p.n)
	for i := range out {
		out[i] = &switchboard.OutboundPeer{AgentID: agentID, Alias: fmt.Sprint("a", i)}
	}
	return out, nil
}

func (p *peers) PutOutboundPeer(ctx context.Context, peer *switchboard.OutboundPeer) (bool, error) {
	p.put++
	return true, nil
}

func (p *peers) DeleteOutboundPeer(ctx context.Context, agentID, alias string) error { return nil }

// TestCheck: an alias's URL is https without credentials, query or
// fragment, on a public host (but where the guard is opened); its token
// is printable and bounded; its alias is valid.
func TestCheck(t *testing.T) {
	s := outpeer.New(&peers{}, front.ClientOptions{})
	for name, tc := range map[string]struct{ alias, url, token string }{
		"alias":       {"bad alias!", "https://remote.example.com", "tok"},
		"no token":    {"bob", "https://remote.example.com", " "},
		"token":       {"bob", "https://remote.example.com", "tok\nX-Evil: 1"},
		"long token":  {"bob", "https://remote.example.com", strings.Repeat("t", outpeer.MaxTokenLen+1)},
		"http":        {"bob", "http://remote.example.com", "tok"},
		"credentials": {"bob", "https://u:p@remote.example.com", "tok"},
		"query":       {"bob", "https://remote.example.com/?token=x", "tok"},
		"fragment":    {"bob", "https://remote.example.com/#x", "tok"},
		"private":     {"bob", "https://10.0.0.7/a", "tok"},
		"loopback":    {"bob", "https://localhost/a", "tok"},
	} {
		if _, err := s.Check(tc.alias, tc.url, tc.token); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	if u, err := s.Check("bob", "https://remote.example.com/a/bob/", "tok"); err != nil || u != "https://remote.example.com/a/bob" {
		t.Errorf("a good alias: %q %v", u, err)
	}
}

// TestPutBoundsAnAgentsAliases: an agent holds at most MaxPerAgent
// aliases; replacing one it holds is still allowed.
func TestPutBoundsAnAgentsAliases(t *testing.T) {
	store := &peers{n: outpeer.MaxPerAgent}
	s := outpeer.New(store, front.ClientOptions{})
	if _, _, err := s.Put(context.Background(), "agent-1", "new", "https://remote.example.com", "tok"); switchboard.ErrorCode(err) != switchboard.ECONFLICT || store.put != 0 {
		t.Fatalf("a new alias past the bound: %v (%d written)", err, store.put)
	}
	if _, _, err := s.Put(context.Background(), "agent-1", "a1", "https://remote.example.com", "tok"); err != nil || store.put != 1 {
		t.Fatalf("replacing a held alias: %v (%d written)", err, store.put)
	}
}

// TestFindAndDeleteCheckTheAlias: an alias that cannot be one is not
// found, and the store is not asked.
func TestFindAndDeleteCheckTheAlias(t *testing.T) {
	s := outpeer.New(&peers{}, front.ClientOptions{})
	if p, err := s.Find(context.Background(), "agent-1", "bad alias!"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("Find of a bad alias: %+v %v", p, err)
	}
	if err := s.Delete(context.Background(), "agent-1", "bad alias!"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("Delete of a bad alias: %v", err)
	}
}

// TestDialEndpointKeepsTheTokenOnTheAliasOrigin: a task's endpoint on
// another origin than the alias's now names gets no token; an alias whose
// token does not open, or has none, dials nothing.
func TestDialEndpointKeepsTheTokenOnTheAliasOrigin(t *testing.T) {
	s := outpeer.New(&peers{}, front.ClientOptions{})
	ctx := context.Background()
	p := &switchboard.OutboundPeer{AgentID: "agent-1", Alias: "bob", URL: "https://remote.example.com", Token: "tok"}
	if _, err := s.DialEndpoint(ctx, p, "https://elsewhere.example.com/a2a", switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Errorf("an endpoint on another origin: %v", err)
	}
	if _, err := s.DialEndpoint(ctx, p, "https://remote.example.com/a2a", switchboard.ProtocolV1); err != nil {
		t.Errorf("an endpoint on the alias's origin: %v", err)
	}
	for name, q := range map[string]*switchboard.OutboundPeer{
		"unreadable": {AgentID: "agent-1", Alias: "bob", URL: p.URL, Token: "tok", Unreadable: true},
		"no token":   {AgentID: "agent-1", Alias: "bob", URL: p.URL},
	} {
		if _, err := s.DialEndpoint(ctx, q, "https://remote.example.com/a2a", switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
			t.Errorf("%s: %v", name, err)
		}
	}
}
