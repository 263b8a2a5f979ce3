package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// result is what a run measured; its JSON form is the -json line. In the
// cross scenario tasks and tasks_per_s count both paths (the load), the
// latencies are the cross path's, and same_* the same-instance path's.
type result struct {
	Scenario     string  `json:"scenario"`
	Agents       int     `json:"agents"`
	Peers        int     `json:"peers"`
	PayloadBytes int     `json:"payload_bytes"`
	Blocking     bool    `json:"blocking"`
	Rate         float64 `json:"rate"`
	// TLS says the peers sent over https (-tls, or -server https://…).
	TLS        bool    `json:"tls,omitempty"`
	DurationS  float64 `json:"duration_s"`
	Tasks      int64   `json:"tasks"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	TasksPerS  float64 `json:"tasks_per_s"`
	// Frames and FramesPerS are the session scenario's: frames taken in
	// by the receivers in the measured window (the latencies are theirs).
	Frames     int64   `json:"frames,omitempty"`
	FramesPerS float64 `json:"frames_per_s,omitempty"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	P999Ms     float64 `json:"p999_ms"`
	ServerCPU  float64 `json:"server_cpu_cores"`
	ToolCPU    float64 `json:"tool_cpu_cores"`
	// CPUs says which CPUs the servers and the tool ran on (-server-cpus);
	// empty when they shared them all.
	CPUs          string  `json:"cpus,omitempty"`
	ServerRSS     int64   `json:"server_rss_bytes"`
	ServerBaseRSS int64   `json:"server_base_rss_bytes,omitempty"`
	RSSPerAgent   int64   `json:"rss_per_agent_bytes"`
	ConnectS      float64 `json:"connect_s,omitempty"`
	// AgentsHeld is how many agents the started instances held connected
	// at the end of an idle run (their switchboard_agents_connected).
	AgentsHeld *int64 `json:"agents_held,omitempty"`

	DirectTasksPerS float64 `json:"direct_tasks_per_s,omitempty"`
	DirectP50Ms     float64 `json:"direct_p50_ms,omitempty"`
	DirectP99Ms     float64 `json:"direct_p99_ms,omitempty"`
	DirectErrors    int64   `json:"direct_errors,omitempty"`

	// Gateway… are the front scenario's bare reverse proxy (-gateway), in
	// front of the same upstream, measured in the same run; its CPU is
	// the gateway process's (closed loop only).
	GatewayTasksPerS float64 `json:"gateway_tasks_per_s,omitempty"`
	GatewayP50Ms     float64 `json:"gateway_p50_ms,omitempty"`
	GatewayP99Ms     float64 `json:"gateway_p99_ms,omitempty"`
	GatewayErrors    int64   `json:"gateway_errors,omitempty"`
	GatewayCPU       float64 `json:"gateway_cpu_cores,omitempty"`

	// NameTasksPerS… are the discover scenario's tasks sent by name (to
	// agents' addresses), measured in the same run as those routed by
	// discovery (to communities' addresses), which are the main ones.
	NameTasksPerS float64 `json:"by_name_tasks_per_s,omitempty"`
	NameP50Ms     float64 `json:"by_name_p50_ms,omitempty"`
	NameP99Ms     float64 `json:"by_name_p99_ms,omitempty"`
	NameErrors    int64   `json:"by_name_errors,omitempty"`
	// JSONRPCTasksPerS… are the bindings scenario's tasks sent over
	// JSON-RPC (the main figures are -binding's).
	JSONRPCTasksPerS float64 `json:"jsonrpc_tasks_per_s,omitempty"`
	JSONRPCP50Ms     float64 `json:"jsonrpc_p50_ms,omitempty"`
	JSONRPCP99Ms     float64 `json:"jsonrpc_p99_ms,omitempty"`
	JSONRPCErrors    int64   `json:"jsonrpc_errors,omitempty"`

	SameTasksPerS float64 `json:"same_tasks_per_s,omitempty"`
	SameP50Ms     float64 `json:"same_p50_ms,omitempty"`
	SameP99Ms     float64 `json:"same_p99_ms,omitempty"`
	SameErrors    int64   `json:"same_errors,omitempty"`

	phases []*phaseResult
}

// setMain records the scenario's own phase.
func (r *result) setMain(p *phaseResult) {
	r.phases = append(r.phases, p)
	r.Tasks, r.Errors, r.FirstError = p.tasks, p.errors, p.firstErr
	r.TasksPerS = p.tasksPerSecond()
	r.P50Ms, r.P99Ms, r.P999Ms = p.percentile(50), p.percentile(99), p.percentile(99.9)
	r.ServerCPU, r.ToolCPU = p.serverCores, p.toolCores
}

// setDirect records the direct path measured in the same run.
func (r *result) setDirect(p *phaseResult) {
	if r.Scenario != "direct" {
		r.phases = append(r.phases, p)
	}
	r.DirectTasksPerS, r.DirectP50Ms, r.DirectP99Ms, r.DirectErrors = p.tasksPerSecond(), p.percentile(50), p.percentile(99), p.errors
}

// setGateway records the front scenario's gateway path, and the
// gateway's CPU in cores where it was measured apart (else 0).
func (r *result) setGateway(p *phaseResult, cores float64) {
	r.phases = append(r.phases, p)
	r.GatewayTasksPerS, r.GatewayP50Ms, r.GatewayP99Ms, r.GatewayErrors = p.tasksPerSecond(), p.percentile(50), p.percentile(99), p.errors
	r.GatewayCPU = cores
}

// setSame records the same-instance path measured in the same run.
func (r *result) setSame(p *phaseResult) {
	r.phases = append(r.phases, p)
	r.SameTasksPerS, r.SameP50Ms, r.SameP99Ms, r.SameErrors = p.tasksPerSecond(), p.percentile(50), p.percentile(99), p.errors
}

// printTable writes the human summary.
func (r *result) printTable(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: %d agents, %d peers, %d-byte messages, blocking %v", r.Scenario, r.Agents, r.Peers, r.PayloadBytes, r.Blocking)
	if r.TLS {
		fmt.Fprint(w, ", over https")
	}
	if r.Rate > 0 {
		fmt.Fprintf(w, ", %.0f tasks/s offered", r.Rate)
	}
	fmt.Fprintln(w)
	if len(r.phases) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		unit := "tasks"
		if r.Scenario == "session" {
			unit = "frames"
		}
		fmt.Fprintf(tw, "path\t%s\terrors\t%s/s\tp50 ms\tp99 ms\tp99.9 ms\t\n", unit, unit)
		for _, p := range r.phases {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t\n", p.name, p.tasks, p.errors, p.tasksPerSecond(),
				p.percentile(50), p.percentile(99), p.percentile(99.9))
		}
		tw.Flush()
		for _, p := range r.phases {
			if p.firstErr != "" {
				fmt.Fprintf(w, "%s: first error: %s\n", p.name, p.firstErr)
			}
		}
		if r.DirectP50Ms > 0 && r.Scenario == "front" {
			fmt.Fprintf(w, "front vs direct: p50 %+.2f ms, p99 %+.2f ms, throughput %.2f×\n", r.P50Ms-r.DirectP50Ms,
				r.P99Ms-r.DirectP99Ms, r.TasksPerS/r.DirectTasksPerS)
			if r.GatewayP50Ms > 0 {
				fmt.Fprintf(w, "gateway vs direct: p50 %+.2f ms, p99 %+.2f ms, throughput %.2f×\n", r.GatewayP50Ms-r.DirectP50Ms,
					r.GatewayP99Ms-r.DirectP99Ms, r.GatewayTasksPerS/r.DirectTasksPerS)
				fmt.Fprintf(w, "front vs gateway: p50 %+.2f ms, p99 %+.2f ms, throughput %.2f×\n", r.P50Ms-r.GatewayP50Ms,
					r.P99Ms-r.GatewayP99Ms, r.TasksPerS/r.GatewayTasksPerS)
			}
		} else if r.DirectP50Ms > 0 && r.Scenario != "direct" {
			fmt.Fprintf(w, "relay vs direct: p50 %.2f×, throughput %.2f×\n", r.P50Ms/r.DirectP50Ms, r.TasksPerS/r.DirectTasksPerS)
		}
		if r.JSONRPCTasksPerS > 0 {
			fmt.Fprintf(w, "binding vs JSON-RPC: throughput %.2f×, p50 %+.2f ms, p99 %+.2f ms\n", r.TasksPerS/r.JSONRPCTasksPerS,
				r.P50Ms-r.JSONRPCP50Ms, r.P99Ms-r.JSONRPCP99Ms)
		}
		if r.NameTasksPerS > 0 {
			fmt.Fprintf(w, "by discovery vs by name: throughput %.2f×, p50 %+.2f ms, p99 %+.2f ms\n", r.TasksPerS/r.NameTasksPerS,
				r.P50Ms-r.NameP50Ms, r.P99Ms-r.NameP99Ms)
		}
		if r.SameP50Ms > 0 {
			fmt.Fprintf(w, "cross vs same instance: p50 %+.2f ms, p99 %+.2f ms\n", r.P50Ms-r.SameP50Ms, r.P99Ms-r.SameP99Ms)
		}
	}
	for _, c := range []struct {
		name        string
		cores, rate float64
	}{{"server", r.ServerCPU, r.TasksPerS}, {"load tool (this process)", r.ToolCPU, r.TasksPerS}, {"gateway", r.GatewayCPU, r.GatewayTasksPerS}} {
		if c.cores > 0 {
			fmt.Fprintf(w, "%s CPU: %.2f cores", c.name, c.cores)
			if c.rate > 0 {
				fmt.Fprintf(w, ", %.0f µs per task", c.cores/c.rate*1e6)
			}
			if r.FramesPerS > 0 {
				fmt.Fprintf(w, ", %.1f µs per frame", c.cores/r.FramesPerS*1e6)
			}
			fmt.Fprintln(w)
		}
	}
	if r.CPUs != "" {
		fmt.Fprintf(w, "CPUs: %s\n", r.CPUs)
	}
	if r.ConnectS > 0 {
		fmt.Fprintf(w, "agents connected in %.1f s\n", r.ConnectS)
	}
	if r.AgentsHeld != nil {
		fmt.Fprintf(w, "agents held connected at the end: %d of %d\n", *r.AgentsHeld, r.Agents)
	}
	if r.ServerRSS > 0 {
		fmt.Fprintf(w, "server RSS: %.1f MiB", float64(r.ServerRSS)/(1<<20))
		if r.RSSPerAgent != 0 {
			fmt.Fprintf(w, " (%.1f MiB before the agents connected; %.1f KiB per connected agent)",
				float64(r.ServerBaseRSS)/(1<<20), float64(r.RSSPerAgent)/1024)
		}
		fmt.Fprintln(w)
	}
}

// printJSON writes the one-line JSON form.
func (r *result) printJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
