package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// sendCall is a 2025-03-26 tools/call of send, with the id and the
// arguments (the account endpoint's agent among them when set).
func sendCall(id int, agent, to, text string) string {
	args := map[string]any{"to": to, "text": text}
	if agent != "" {
		args["agent"] = agent
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "send", "arguments": args}})
	return string(b)
}

// batchAnswers decodes the answer to a batch by id: each answer's error
// code (0 for a result) and, for a result, whether the tool failed.
func batchAnswers(t *testing.T, r *response) (codes map[string]int, toolFailed map[string]bool) {
	t.Helper()
	var answers []struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.body), &answers); err != nil {
		t.Fatalf("the answer to a batch is no JSON array: HTTP %d %s", r.status, r.body)
	}
	codes, toolFailed = map[string]int{}, map[string]bool{}
	for _, a := range answers {
		id := string(a.ID)
		if _, dup := codes[id]; dup {
			t.Fatalf("two answers to id %s", id)
		}
		switch {
		case a.Error != nil:
			codes[id] = a.Error.Code
			if a.Error.Code == -32029 && !strings.Contains(a.Error.Message, "rate limit") {
				t.Errorf("id %s: error %q", id, a.Error.Message)
			}
		case a.Result != nil:
			codes[id] = 0
			toolFailed[id] = a.Result.IsError
		default:
			t.Fatalf("id %s: neither result nor error", id)
		}
	}
	return codes, toolFailed
}

// received counts the tasks the agent holds.
func (w *world) received(g *switchboard.Agent) int {
	w.t.Helper()
	tasks, _, err := w.db.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID, NoTotal: true})
	must(w.t, err)
	return len(tasks)
}

// TestBatchCountsEveryCall: every message of a JSON-RPC batch (MCP
// 2025-03-26, the version of a request without MCP-Protocol-Version) counts
// against the grant's rate limit, on {address}/mcp and {base}/mcp. A batch
// of 100 sends makes exactly 60 tasks (the limit) and answers the other 40
// with the rate-limit error under their ids; the calls of a mixed batch
// (initialize, tools/list, tools/call) count alike; a batch once the limit
// is spent is refused whole with 429 and makes no task.
func TestBatchCountsEveryCall(t *testing.T) {
	const limit, n = 60, 100
	lim := ratelimit.NewMemory(limit, time.Minute)
	now := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	lim.Now = func() time.Time { return now }
	w := newWorld(t, "sqlite", lim)
	helper, other := w.agent("helper"), w.agent("other")
	for _, g := range []string{helper.ID, other.ID} {
		_, err := w.db.JoinCommunity(context.Background(), g, "team", true)
		must(t, err)
	}
	r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["helper"]}`, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("mint an account token: HTTP %d %s", r.status, r.body)
	}
	endpoints := []struct{ name, url, token, agent string }{
		{"agent", w.mcpURL(helper), w.mcpToken(helper, "claude"), ""},
		{"account", w.srv.URL + "/mcp", r.json["token"].(string), "helper"},
	}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			now = now.Add(time.Minute) // a fresh window
			before := w.received(other)
			calls := make([]string, n)
			for i := range calls {
				calls[i] = sendCall(i+1, ep.agent, "other", "batched "+strconv.Itoa(i+1))
			}
			r := w.post(ep.url, ep.token, "["+strings.Join(calls, ",")+"]", nil)
			if r.status != http.StatusOK {
				t.Fatalf("a batch of %d sends: HTTP %d %s", n, r.status, r.body)
			}
			codes, failed := batchAnswers(t, r)
			if len(codes) != n {
				t.Fatalf("%d answers to %d calls", len(codes), n)
			}
			ran, limited := 0, 0
			for i := 1; i <= n; i++ {
				switch id := strconv.Itoa(i); codes[id] {
				case 0:
					if failed[id] {
						t.Fatalf("call %d failed as a tool: %s", i, r.body)
					}
					ran++
				case -32029:
					limited++
				default:
					t.Fatalf("call %d: code %d", i, codes[id])
				}
			}
			if got := w.received(other) - before; ran != limit || limited != n-limit || got != limit {
				t.Fatalf("%d calls ran, %d refused, %d tasks made; want %d, %d, %d", ran, limited, got, limit, n-limit, limit)
			}
			// The limit is spent: a batch is refused whole, and a single
			// call the same way.
			r = w.post(ep.url, ep.token, "["+sendCall(1, ep.agent, "other", "late")+","+legacyList+"]", nil)
			if code, _ := rpcError(r); r.status != http.StatusTooManyRequests || code != -32029 || r.header.Get("Retry-After") == "" {
				t.Fatalf("a batch past the limit: HTTP %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
			}
			if got := w.received(other) - before; got != limit {
				t.Fatalf("%d tasks after the refused batch, want %d", got, limit)
			}

			// Mixed methods count alike: initialize, tools/list and
			// notifications are messages of the batch too.
			now = now.Add(time.Minute)
			before = w.received(other)
			mixed := []string{
				`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			}
			for i := range limit {
				mixed = append(mixed, sendCall(1000+i, ep.agent, "other", fmt.Sprint("mixed ", i)))
			}
			r = w.post(ep.url, ep.token, "["+strings.Join(mixed, ",")+"]", nil)
			codes, _ = batchAnswers(t, r)
			ran, limited = 0, 0
			for id, code := range codes {
				switch code {
				case 0:
					ran++
				case -32029:
					limited++
				default:
					t.Fatalf("id %s: code %d", id, code)
				}
			}
			// 63 messages, 60 within the limit: the three before the sends
			// and 57 sends run, 3 sends are refused.
			if got := w.received(other) - before; codes[`"init"`] != 0 || codes[`"list"`] != 0 || ran != limit-1 || limited != 3 || got != limit-3 {
				t.Fatalf("mixed batch: init %d list %d, %d ran, %d refused, %d tasks; want 0 0 %d 3 %d: %s",
					codes[`"init"`], codes[`"list"`], ran, limited, got, limit-1, limit-3, r.body)
			}
		})
	}
}

// countingLimiter is a real limiter whose counts are counted.
type countingLimiter struct {
	switchboard.RateLimiter
	calls atomic.Int64
}

func (c *countingLimiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	c.calls.Add(1)
	return c.RateLimiter.Allow(ctx, key)
}

// TestBatchPastTheLimitCostsLittle: a batch far longer than the limit
// costs the limiter one count more than the limit, reaches the SDK with
// the calls within it only, and each call past it is answered under its
// id.
func TestBatchPastTheLimitCostsLittle(t *testing.T) {
	const limit, n = 60, 5000
	mem := ratelimit.NewMemory(limit, time.Minute)
	mem.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC) }
	lim := &countingLimiter{RateLimiter: mem}
	w := newWorld(t, "sqlite", lim)
	g := w.agent("helper")
	secret := w.mcpToken(g, "claude")
	pings := make([]string, n)
	for i := range pings {
		pings[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}`
	}
	r := w.post(w.mcpURL(g), secret, "["+strings.Join(pings, ",")+"]", nil)
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d %s", r.status, r.body)
	}
	codes, _ := batchAnswers(t, r)
	ran := 0
	for _, code := range codes {
		if code == 0 {
			ran++
		}
	}
	if len(codes) != n || ran != limit || lim.calls.Load() != limit+1 {
		t.Fatalf("%d answers, %d ran, %d counts; want %d, %d, %d", len(codes), ran, lim.calls.Load(), n, limit, limit+1)
	}
}
