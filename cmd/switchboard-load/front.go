package main

import (
	"context"
	"fmt"
	"io"
)

// The front scenario: an a2a-go v2 server (the echo agent of the direct
// comparison) runs in this process as the upstream of -agents front
// agents, and the same peers call it directly and through the fronts.
// With -rate, one phase's calls alternate between the two paths, so that
// both are measured under the same load at the same moments (-rate is the
// two together). Without, calls interleaved in one phase would share the
// throughput out evenly by construction, so the paths take turns
// (alternate.go). -record none makes the fronts pass-through ones. With
// -gateway, a bare reverse proxy in a process of its own (gateway.go) is
// a third path to the same upstream: a gateway's cost on this machine.

// runFront starts the upstream, puts the fronts in front of it and
// measures both paths.
func runFront(ctx context.Context, cfg *config, dep *deployment, d *driver, res *result, logs io.Writer) error {
	ref, err := startReferenceServer(echoExecutor{})
	if err != nil {
		return err
	}
	defer ref.stop()
	prefix := "load-" + randomWord()
	fmt.Fprintf(logs, "creating %d front agents (record %s) on %s, upstream %s\n", cfg.agents, cfg.record, dep.peerURL, ref.url)
	fields := map[string]any{"mode": "front", "upstream": ref.url}
	if cfg.record != "" {
		fields["record"] = cfg.record
	}
	agents, err := dep.owner.createAgentsWith(ctx, prefix, fields, cfg.agents, true, logs)
	if err != nil {
		return fmt.Errorf("create agents: %w", err)
	}
	fronts := make([]target, len(agents))
	for i, g := range agents {
		fronts[i] = target{url: dep.peerURL + "/a/" + g.Handle, token: g.PeerToken}
	}
	var gw *gatewayProcess
	if cfg.gateway {
		if gw, err = startGateway(ref.url, cfg.split); err != nil {
			return fmt.Errorf("start the gateway: %w", err)
		}
		defer gw.stop()
		fmt.Fprintf(logs, "gateway (a bare reverse proxy) on %s\n", gw.url)
	}
	if cfg.rate > 0 {
		groups := []string{"direct", "front"}
		if gw != nil {
			groups = append(groups, "gateway")
		}
		mixed := make([]target, 0, len(groups)*len(agents))
		for _, t := range fronts {
			t.group = 1
			mixed = append(mixed, target{url: ref.url}, t)
			if gw != nil {
				mixed = append(mixed, target{url: gw.url, group: 2})
			}
		}
		rs := d.driveGroups(ctx, phase{name: "front", groups: groups, targets: mixed,
			wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking, serverCPU: dep.cpuSeconds})
		res.setMain(rs[1])
		res.setDirect(rs[0])
		if gw != nil {
			res.setGateway(rs[2], 0) // the phase's CPU is the server's
		}
	} else {
		phases := []phase{
			{name: "direct", targets: []target{{url: ref.url}}, wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking},
			{name: "front", targets: fronts, wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking, serverCPU: dep.cpuSeconds},
		}
		if gw != nil {
			phases = append(phases, phase{name: "gateway", targets: []target{{url: gw.url}}, wantState: "TASK_STATE_COMPLETED",
				blocking: cfg.blocking, serverCPU: gw.cpuSeconds})
		}
		rs := d.alternateAll(ctx, phases...)
		res.setMain(rs[1])
		res.setDirect(rs[0])
		if gw != nil {
			res.setGateway(rs[2], rs[2].serverCores)
		}
	}
	res.ServerRSS = dep.rss()
	return ctx.Err()
}
