package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadAgent is one agent the tool created.
type loadAgent struct {
	Handle     string `json:"handle"`
	AgentToken string `json:"agent_token,omitempty"` // connector agents
	PeerToken  string `json:"peer_token,omitempty"`  // when peers send to it
}

// ownerClient calls a deployment's owner API.
type ownerClient struct {
	base  string
	token string
	http  *http.Client
}

// call sends a JSON request and decodes a 2xx answer into out.
func (o *ownerClient) call(ctx context.Context, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, o.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
	}
	if len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

// createAgents creates n agents named prefix-0…prefix-(n-1) in mode, with
// a peer token each when withPeer, using a few calls at a time.
func (o *ownerClient) createAgents(ctx context.Context, prefix, mode string, n int, withPeer bool, progress io.Writer) ([]loadAgent, error) {
	return o.createAgentsWith(ctx, prefix, map[string]any{"mode": mode}, n, withPeer, progress)
}

// createAgentsWith is createAgents with the fields of each agent's
// creation (its mode, a front's upstream) given whole.
func (o *ownerClient) createAgentsWith(ctx context.Context, prefix string, fields map[string]any, n int, withPeer bool, progress io.Writer) ([]loadAgent, error) {
	mode, _ := fields["mode"].(string)
	agents := make([]loadAgent, n)
	const workers = 8
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) {
		once.Do(func() { firstErr = err; cancel() })
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				g := &agents[i]
				g.Handle = fmt.Sprintf("%s-%d", prefix, i)
				var created struct {
					AgentToken string `json:"agent_token"`
				}
				body := map[string]any{"handle": g.Handle}
				for k, v := range fields {
					body[k] = v
				}
				if err := o.call(ctx, "POST", "/agents", body, &created); err != nil {
					fail(err)
					return
				}
				g.AgentToken = created.AgentToken
				if mode == "connector" && g.AgentToken == "" {
					fail(fmt.Errorf("POST /agents: no agent_token for %s", g.Handle))
					return
				}
				if withPeer {
					var tok struct {
						Token string `json:"token"`
					}
					if err := o.call(ctx, "POST", "/agents/"+g.Handle+"/tokens", map[string]any{"label": "load"}, &tok); err != nil {
						fail(err)
						return
					}
					g.PeerToken = tok.Token
				}
				if done := i + 1; progress != nil && done%5000 == 0 {
					fmt.Fprintf(progress, "created %d agents (%.1f s)\n", done, time.Since(start).Seconds())
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return agents, ctx.Err()
}

// deleteAgents deletes the agents, a few at a time; failures are reported
// on stderr and skipped.
func (o *ownerClient) deleteAgents(ctx context.Context, agents []loadAgent) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(agents) {
					return
				}
				if err := o.call(ctx, "DELETE", "/agents/"+agents[i].Handle, nil, &struct{}{}); err != nil {
					fmt.Fprintln(os.Stderr, "delete agent:", err)
				}
			}
		})
	}
	wg.Wait()
}
