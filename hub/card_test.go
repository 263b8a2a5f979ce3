package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// TestPublishCard: a connector publishes its forward server's card, which
// the store keeps; a card that is not one, too large, or without the
// server's URL is refused with invalid params; a null card forgets it.
func TestPublishCard(t *testing.T) {
	s := newServer(t)
	g, _ := s.agent("laptop")
	a := s.connect(s.agentToken(g))
	ctx := context.Background()
	card := `{"name":"Local","description":"on my laptop","supportedInterfaces":[{"url":"http://127.0.0.1:9999/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"id":"x","name":"X","description":"does x","tags":["x"]}]}`

	refused := map[string]map[string]any{
		"NotACard":    {"target": "http://127.0.0.1:9999", "card": []any{1, 2}},
		"NoName":      {"target": "http://127.0.0.1:9999", "card": map[string]any{"description": "nameless"}},
		"NoTarget":    {"card": map[string]any{"name": "Local"}},
		"OddTarget":   {"target": "ftp://127.0.0.1", "card": map[string]any{"name": "Local"}},
		"TooLarge":    {"target": "http://127.0.0.1:9999", "card": map[string]any{"name": "Local", "description": strings.Repeat("x", switchboard.MaxPublishedCard)}},
		"ParamsArray": nil,
	}
	for name, params := range refused {
		t.Run(name, func(t *testing.T) {
			var p any = params
			if params == nil {
				p = []int{1}
			}
			f := a.call(connproto.MethodPublishCard, p)
			if f.Error == nil || f.Error.Code != connproto.CodeInvalidParams {
				t.Fatalf("answer %+v, want invalid params", f)
			}
		})
	}
	if _, err := s.db.FindPublishedCard(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after refusals only: %v, want no card", err)
	}

	f := a.call(connproto.MethodPublishCard, map[string]any{"target": "http://127.0.0.1:9999", "card": json.RawMessage(card)})
	if f.Error != nil {
		t.Fatalf("publish: %+v", f.Error)
	}
	got, err := s.db.FindPublishedCard(ctx, g.ID)
	must(t, err)
	if got.Target != "http://127.0.0.1:9999" || !strings.Contains(string(got.Card), `"on my laptop"`) {
		t.Fatalf("kept %+v", got)
	}
	if f := a.call(connproto.MethodPublishCard, map[string]any{"target": "", "card": nil}); f.Error != nil {
		t.Fatalf("forget: %+v", f.Error)
	}
	if _, err := s.db.FindPublishedCard(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after a null card: %v, want none", err)
	}
}
