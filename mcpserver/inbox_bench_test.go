package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/gcfloor"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// benchOpenTasks is how many open tasks the agent of BenchmarkInbox has.
const benchOpenTasks = 1000

// BenchmarkInbox measures tools/call inbox over loopback HTTP in protocol
// 2026-07-28 (one request per call) for an agent with 1,000 open tasks
// (the tool lists the first 20), with two clients in the benchmark's
// process: the go-sdk client (sdk), and a raw HTTP client that posts the
// same request and reads the whole answer without decoding it (http), which
// leaves the server's own time. Calls are counted by the rate limiter serve
// uses. It reports the 99th percentile as p99-ms;
// docs/performance.md records the numbers. The garbage collector keeps the
// headroom switchboard serve gives it by default.
func BenchmarkInbox(b *testing.B) {
	defer gcfloor.Start(gcfloor.DefaultHeadroom)() // as switchboard serve runs
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			// Every call is counted as switchboard serve counts it (in
			// memory on SQLite, a write to the shared counts on PostgreSQL),
			// under a limit the benchmark never reaches.
			counts := &laterCounter{}
			var limiter switchboard.RateLimiter = ratelimit.NewMemory(1<<30, time.Minute)
			if kind == "postgres" {
				limiter = ratelimit.NewShared(counts, 1<<30, time.Minute)
			}
			w := newWorld(b, kind, limiter)
			counts.Counter = w.db
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
			token := w.mcpToken(g, "bench")
			b.Run("sdk", func(b *testing.B) {
				cs := connect(b, w.mcpURL(g), token, "2026-07-28")
				params := &mcp.CallToolParams{Name: "inbox", Arguments: map[string]any{}}
				benchCalls(b, func() error {
					res, err := cs.CallTool(ctx, params)
					if err == nil && res.IsError {
						err = fmt.Errorf("inbox: %v", res.Content)
					}
					return err
				})
			})
			b.Run("http", func(b *testing.B) {
				body := []byte(modern("tools/call", "2026-07-28", `"name":"inbox","arguments":{}`))
				hc := &http.Client{}
				benchCalls(b, func() error {
					req, err := http.NewRequestWithContext(ctx, "POST", w.mcpURL(g), bytes.NewReader(body))
					if err != nil {
						return err
					}
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("MCP-Protocol-Version", "2026-07-28")
					req.Header.Set("Mcp-Method", "tools/call")
					req.Header.Set("Mcp-Name", "inbox")
					resp, err := hc.Do(req)
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					got, err := io.ReadAll(resp.Body)
					if err != nil {
						return err
					}
					if resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(`"count":20`)) || bytes.Contains(got, []byte(`"isError":true`)) {
						return fmt.Errorf("inbox: %d %s", resp.StatusCode, strings.TrimSpace(string(got[:min(len(got), 300)])))
					}
					return nil
				})
			})
		})
	}
}

// laterCounter is a ratelimit.Counter whose store is set once it exists.
type laterCounter struct{ ratelimit.Counter }

// benchCalls runs call b.N times and reports its 99th percentile.
func benchCalls(b *testing.B, call func() error) {
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
