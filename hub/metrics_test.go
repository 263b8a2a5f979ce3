package hub_test

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/internal/promtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/metrics"
)

// hubSamples scrapes the hub's metrics and parses them strictly.
func (s *server) hubSamples(reg *metrics.Registry) map[string]float64 {
	s.t.Helper()
	var buf bytes.Buffer
	must(s.t, reg.WriteText(&buf))
	got, err := promtest.Parse(&buf)
	must(s.t, err)
	return got
}

// wantSamples polls the hub's metrics until they hold want.
func (s *server) wantSamples(reg *metrics.Registry, want map[string]float64) {
	s.t.Helper()
	testwait.ForErr(s.t, "the hub's metrics", func() error {
		got := s.hubSamples(reg)
		var bad []string
		for k, v := range want {
			if got[k] != v {
				bad = append(bad, fmt.Sprintf("%s: got %v, want %v", k, got[k], v))
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return errors.New(strings.Join(bad, "; "))
		}
		return nil
	})
}

func TestHubMetrics(t *testing.T) {
	s := newServer(t)
	reg := metrics.NewRegistry()
	reg.MustRegister(s.hub.Metrics()...)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	s.wantSamples(reg, map[string]float64{"switchboard_agents_connected": 0, "switchboard_hub_connections_total": 0})

	first := s.connect(tok)
	id := s.send(g, peer, "x", true)["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
	o := first.nextOffer() // held, not acknowledged
	s.wantSamples(reg, map[string]float64{
		"switchboard_agents_connected":      1,
		"switchboard_hub_connections_total": 1,
		"switchboard_hub_offers_total":      1,
		"switchboard_hub_pending_offers":    1,
		"switchboard_hub_outbound_frames":   0,
	})
	first.complete(o, "done")
	s.waitState(id, a2a.TaskStateCompleted)
	s.wantSamples(reg, map[string]float64{"switchboard_hub_pending_offers": 0})

	second := s.connect(tok)
	first.closed()
	s.wantSamples(reg, map[string]float64{
		"switchboard_agents_connected":                    1,
		"switchboard_hub_connections_total":               2,
		`switchboard_hub_closes_total{reason="replaced"}`: 1,
		`switchboard_hub_closes_total{reason="agent"}`:    0,
	})
	must(t, second.ws.Close(websocket.StatusNormalClosure, "bye"))
	s.wantSamples(reg, map[string]float64{
		"switchboard_agents_connected":                 0,
		`switchboard_hub_closes_total{reason="agent"}`: 1,
	})
}
