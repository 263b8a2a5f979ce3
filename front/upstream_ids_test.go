package front

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// contextStore is a FrontStore that knows one peer's context mapping and
// counts the lookups of it; nothing else is called in these tests.
type contextStore struct {
	switchboard.FrontStore
	lookups int
}

func (s *contextStore) FindFrontContext(_ context.Context, agentID, peerID, contextID string) (string, error) {
	s.lookups++
	if agentID == "g" && peerID == "p" && contextID == "ctx-1" {
		return "up-ctx", nil
	}
	return "", nil
}

// TestUpstreamIDsMintedContext: a task whose context Switchboard made is
// sent without reading front_contexts (no mapping can exist); a task in a
// context the peer named finds its upstream context there.
func TestUpstreamIDsMintedContext(t *testing.T) {
	st := &contextStore{}
	s := &Service{store: st}
	named := &switchboard.Task{A2A: a2a.Task{ID: "t1", ContextID: "ctx-1"}, AgentID: "g", PeerID: "p"}
	m, err := s.upstreamIDs(context.Background(), named, true)
	if err != nil || m.UpstreamContextID != "up-ctx" || st.lookups != 1 {
		t.Fatalf("a named context: %+v, %v, %d lookups", m, err, st.lookups)
	}
	minted := &switchboard.Task{A2A: a2a.Task{ID: "t2", ContextID: "made-here"}, AgentID: "g", PeerID: "p", ContextMinted: true}
	m, err = s.upstreamIDs(context.Background(), minted, true)
	if err != nil || m.UpstreamContextID != "" || m.ContextID != "made-here" || st.lookups != 1 {
		t.Fatalf("a minted context: %+v, %v, %d lookups", m, err, st.lookups)
	}
}
