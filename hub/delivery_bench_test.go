package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// BenchmarkOfferRoundTrip measures live delivery to a connected agent over
// a real loopback WebSocket: a peer's 1 KiB message accepted by the task
// service (task, event and delivery written, the agent's subject hinted),
// the hub's writer claiming the delivery and offering it, the agent
// answering with a 1 KiB message, and the answer recorded, which completes
// the task. Each iteration waits for the completed task, as a blocking
// send does. Allocations count the agent's side too.
func BenchmarkOfferRoundTrip(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]
	ctx := context.Background()
	s := newServer(b)
	g, agentToken := s.agent("bench")
	tok, err := s.db.FindTokenByHash(ctx, switchboard.HashToken(s.peerToken(g, "peer")))
	must(b, err)
	peer := switchboard.Peer{AgentID: g.ID, ID: tok.PeerID, Label: tok.Label}

	answered := make(chan struct{})
	b.Cleanup(func() { <-answered }) // runs after the connection is closed
	a := s.connect(agentToken)
	go func() {
		defer close(answered)
		answerOffers(a, text)
	}()

	b.ReportAllocs()
	for b.Loop() {
		req := &a2a.SendMessageRequest{Message: &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser,
			Parts: a2a.ContentParts{a2a.NewTextPart(text)}}}
		t, _, err := s.tasks.SendMessage(ctx, g, peer, req, switchboard.ProtocolV1)
		must(b, err)
		t, err = s.tasks.WaitForTurn(ctx, t.ID(), t.Seq, 10*time.Second)
		must(b, err)
		if t.State() != a2a.TaskStateCompleted {
			b.Fatalf("task %s is %s, want completed", t.ID(), t.State())
		}
	}
}

// answerOffers answers every SendMessage offered to the agent with a
// message, until the connection closes. It runs beside the benchmark, so
// it reports nothing: a missing answer shows as the task not completing.
func answerOffers(a *testAgent, text string) {
	for f := range a.in {
		if f.Method != connproto.MethodSendMessage {
			continue
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": map[string]any{
			"message": map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}}},
		}})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = a.ws.Write(ctx, websocket.MessageText, b)
		cancel()
		if err != nil {
			return
		}
	}
}
