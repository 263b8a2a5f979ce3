package a2aedge

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// BenchmarkRenderCard measures an agent card as its handlers build it once
// the agent is found: the address, the card of the version asked for, its
// JSON, its ETag and the headers. The agent has three skills.
func BenchmarkRenderCard(b *testing.B) {
	s := New(httpapi.NewEnv(httpapi.EnvDeps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, httpapi.Config{}), Deps{})
	agent := &switchboard.Agent{
		ID: switchboard.NewID(), Handle: "travel", Name: "Travel desk", Version: "2.1.0",
		Description: "Plans trips: finds trains and flights, books hotels and keeps the itinerary.",
		Mode:        switchboard.ModeConnector, AcceptsTasks: true,
		Skills: []a2a.AgentSkill{
			{ID: "plan", Name: "Plan a trip", Description: "Builds an itinerary from a destination and dates.",
				Tags: []string{"travel", "planning"}, Examples: []string{"Three days in Lisbon in May", "A weekend in the Alps"}},
			{ID: "book", Name: "Book", Description: "Books the trains, flights and hotels of an itinerary.",
				Tags: []string{"travel", "booking"}, InputModes: []string{"application/json"}},
			{ID: "status", Name: "Trip status", Description: "Reports delays and changes to a booked trip.",
				Tags: []string{"travel"}, OutputModes: []string{"text/plain"}},
		},
	}
	cards := []struct {
		name, path string
		card       func(addr string) any
	}{
		{"1.0", "/.well-known/agent-card.json", func(addr string) any { return s.cardV1(agent, addr, false, nil) }},
		{"0.3", "/.well-known/agent.json", func(addr string) any { return s.cardV03(agent, addr, false, nil) }},
	}
	for _, c := range cards {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "http://switchboard.example/a/"+agent.Handle+c.path, nil)
			r.SetPathValue("handle", agent.Handle)
			w := &discardResponse{header: http.Header{}, keep: true}
			serveCard(w, r, c.card(s.ReachedAddress(r, agent)))
			if w.status != http.StatusOK || !bytes.Contains(w.body.Bytes(), []byte(`"Trip status"`)) {
				b.Fatalf("card: %d %s", w.status, w.body.Bytes())
			}
			w.keep = false
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				serveCard(w, r, c.card(s.ReachedAddress(r, agent)))
			}
		})
	}
}
