package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// The discover scenario: the agents are spread over -communities
// communities (agent i in community i mod N) and, within each, over
// -skills skills; every community has a peer token. Two kinds of phase
// run on the same deployment and agents: by name (to an agent's address,
// with its peer token, as the route scenario), and by discovery (to the
// agent's community's address, with the community's token, asking for
// the agent's skill in the message's metadata: discovery chooses among
// the community's agents with it). Their throughputs compare the two ways
// of routing: calls interleaved in one phase would share it out evenly by
// construction. So the kinds take turns (alternate.go); that also keeps
// either from running on the smaller database (every task stays in it).

// runDiscover sets the network up and measures both groups.
func runDiscover(ctx context.Context, cfg *config, dep *deployment, d *driver, agents []loadAgent, res *result, logs io.Writer) error {
	communities := min(cfg.communities, len(agents))
	skillOf := func(i int) string { return fmt.Sprintf("skill-%d", (i/communities)%cfg.skills) }
	communityOf := func(i int) string { return fmt.Sprintf("%s-c%d", agents[0].Handle, i%communities) }
	fmt.Fprintf(logs, "discover: %d agents in %d communities, %d skills each\n", len(agents), communities, cfg.skills)
	if err := joinCommunities(ctx, dep.owner, agents, skillOf, communityOf); err != nil {
		return err
	}
	tokens := make([]string, communities)
	for c := range communities {
		var tok struct {
			Token string `json:"token"`
		}
		if err := dep.owner.call(ctx, "POST", "/communities/"+communityOf(c)+"/tokens", map[string]any{"label": "load"}, &tok); err != nil {
			return fmt.Errorf("community token: %w", err)
		}
		tokens[c] = tok.Token
	}
	byName := make([]target, len(agents))
	byDiscovery := make([]target, len(agents))
	for i, g := range agents {
		byName[i] = target{url: dep.peerURL + "/a/" + g.Handle, token: g.PeerToken}
		byDiscovery[i] = target{url: dep.peerURL + "/c/" + communityOf(i), token: tokens[i%communities], skill: skillOf(i)}
	}
	byNamePhase := phase{name: "by-name", targets: byName, wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking,
		serverCPU: dep.cpuSeconds}
	byDiscoveryPhase := phase{name: "by-discovery", targets: byDiscovery, wantState: "TASK_STATE_COMPLETED",
		blocking: cfg.blocking, serverCPU: dep.cpuSeconds}
	named, discovered := d.alternate(ctx, byNamePhase, byDiscoveryPhase)
	res.setMain(discovered)
	res.phases = append(res.phases, named)
	res.NameTasksPerS, res.NameP50Ms, res.NameP99Ms, res.NameErrors = named.tasksPerSecond(), named.percentile(50), named.percentile(99), named.errors
	res.ServerRSS = dep.rss()
	return ctx.Err()
}

// mergePhases returns the result of the two halves of a phase: their
// tasks, errors, time and latencies together, and their CPU averaged over
// their time.
func mergePhases(a, b *phaseResult) *phaseResult {
	out := &phaseResult{name: a.name, tasks: a.tasks + b.tasks, errors: a.errors + b.errors,
		firstErr: cmp.Or(a.firstErr, b.firstErr), elapsed: a.elapsed + b.elapsed,
		latencies: slices.Concat(a.latencies, b.latencies)}
	slices.Sort(out.latencies)
	if out.elapsed > 0 {
		wa, wb := a.elapsed.Seconds()/out.elapsed.Seconds(), b.elapsed.Seconds()/out.elapsed.Seconds()
		out.serverCores = a.serverCores*wa + b.serverCores*wb
		out.toolCores = a.toolCores*wa + b.toolCores*wb
	}
	return out
}

// joinCommunities gives each agent its skill and puts it in its community,
// a few calls at a time.
func joinCommunities(ctx context.Context, o *ownerClient, agents []loadAgent, skillOf, communityOf func(int) string) error {
	var next atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(agents) || ctx.Err() != nil {
					return
				}
				h := agents[i].Handle
				skills := []map[string]any{{"id": skillOf(i), "name": skillOf(i), "tags": []string{"load"}}}
				err := o.call(ctx, "PATCH", "/agents/"+h, map[string]any{"skills": skills}, &struct{}{})
				if err == nil {
					err = o.call(ctx, "PUT", "/agents/"+h+"/communities/"+communityOf(i), nil, &struct{}{})
				}
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("set up the network: %w", err) })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
