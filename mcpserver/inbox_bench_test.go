package mcpserver_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/gcfloor"
)

// benchOpenTasks is how many open tasks the agent of BenchmarkInbox has.
const benchOpenTasks = 1000

// BenchmarkInbox measures tools/call inbox over HTTP with the go-sdk client
// (2026-07-28: one request per call) for an agent with 1,000 open tasks
// (the tool lists the first page, 200). It reports the 99th percentile as
// p99-ms; docs/performance.md records the number. The garbage collector
// keeps the headroom switchboard serve gives it by default.
func BenchmarkInbox(b *testing.B) {
	defer gcfloor.Start(gcfloor.DefaultHeadroom)() // as switchboard serve runs
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			w := newWorld(b, kind, nil)
			w.tasks.MaxOpenTasksPerPeer = 0
			g := w.agent("busy")
			peer := switchboard.Peer{AgentID: g.ID, ID: switchboard.NewID(), Label: "bob"}
			ctx := context.Background()
			for i := range benchOpenTasks {
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d: please look at this", i)))
				if _, _, err := w.tasks.SendMessage(ctx, g, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1); err != nil {
					b.Fatal(err)
				}
			}
			cs := connect(b, w.mcpURL(g), w.mcpToken(g, "bench"), "2026-07-28")
			params := &mcp.CallToolParams{Name: "inbox", Arguments: map[string]any{}}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("inbox: %v %v", err, res)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
