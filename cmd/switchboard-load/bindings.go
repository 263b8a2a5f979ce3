package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// The bindings scenario: the route scenario's peers and agents, sent to
// over JSON-RPC and over -binding (rest: HTTP+JSON under each address;
// grpc: gRPC over h2c, the agent named by its tenant), in turns
// (alternate.go), so that the two are measured on the same deployment
// under the same conditions.

// runBindings measures JSON-RPC and cfg.binding in turns.
func runBindings(ctx context.Context, cfg *config, dep *deployment, d *driver, agents []loadAgent, res *result, logs io.Writer) error {
	rpc := make([]target, len(agents))
	other := make([]target, len(agents))
	for i, g := range agents {
		rpc[i] = target{url: dep.peerURL + "/a/" + g.Handle, token: g.PeerToken}
		other[i] = target{url: dep.peerURL + "/a/" + g.Handle, token: g.PeerToken, binding: cfg.binding, tenant: g.Handle}
	}
	if cfg.binding == "grpc" {
		if err := d.dialGRPC(dep.peerURL, cfg.peers); err != nil {
			return err
		}
		defer d.closeGRPC()
	}
	fmt.Fprintf(logs, "bindings: JSON-RPC and %s in turns, on %s\n", cfg.binding, dep.peerURL)
	a := phase{name: "jsonrpc", targets: rpc, wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking, serverCPU: dep.cpuSeconds}
	b := phase{name: cfg.binding, targets: other, wantState: "TASK_STATE_COMPLETED", blocking: cfg.blocking, serverCPU: dep.cpuSeconds}
	ra, rb := d.alternate(ctx, a, b)
	res.setMain(rb)
	res.phases = append(res.phases, ra)
	res.JSONRPCTasksPerS, res.JSONRPCP50Ms, res.JSONRPCP99Ms, res.JSONRPCErrors = ra.tasksPerSecond(), ra.percentile(50), ra.percentile(99), ra.errors
	res.ServerRSS = dep.rss()
	return ctx.Err()
}

// grpcPool is the peers' gRPC connections, one per peer, used in turn.
type grpcPool struct {
	conns   []*grpc.ClientConn
	clients []a2apb.A2AServiceClient
	next    atomic.Uint64
}

// dialGRPC opens n h2c connections to the server at base.
func (d *driver) dialGRPC(base string, n int) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("-binding grpc: the load tool dials h2c only, not %s", u.Scheme)
	}
	p := &grpcPool{}
	for range max(n, 1) {
		conn, err := grpc.NewClient(u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		p.conns = append(p.conns, conn)
		p.clients = append(p.clients, a2apb.NewA2AServiceClient(conn))
	}
	d.grpc = p
	return nil
}

func (d *driver) closeGRPC() {
	for _, c := range d.grpc.conns {
		_ = c.Close()
	}
}

// sendREST sends one message over HTTP+JSON and returns its task.
func (d *driver) sendREST(ctx context.Context, t target, body []byte) (*taskState, error) {
	return d.restCall(ctx, t, "POST", t.url+"/message:send", body)
}

// restCall makes one HTTP+JSON call whose answer holds a task (SendMessage's
// {"task":…}, or GetTask's task).
func (d *driver) restCall(ctx context.Context, t target, method, u string, body []byte) (*taskState, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	data, err := d.do(req)
	if err != nil {
		return nil, err
	}
	var a answerResult
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	if a.Task != nil {
		return a.Task, nil
	}
	if a.ID != "" {
		return &a.taskState, nil
	}
	return nil, fmt.Errorf("the answer holds no task: %.200s", data)
}

// sendGRPC sends one message over gRPC and returns its task.
func (d *driver) sendGRPC(ctx context.Context, t target, msgID string, returnImmediately bool) (*taskState, error) {
	c := d.grpc.clients[d.grpc.next.Add(1)%uint64(len(d.grpc.clients))]
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+t.token)
	resp, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: t.tenant,
		Message: &a2apb.Message{MessageId: msgID, Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: string(d.payload)}}}},
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: returnImmediately}})
	if err != nil {
		return nil, err
	}
	task := resp.GetTask()
	if task == nil {
		return nil, fmt.Errorf("the answer holds no task")
	}
	out := &taskState{ID: task.GetId()}
	out.Status.State = task.GetStatus().GetState().String()
	return out, nil
}

// getGRPC reads a task over gRPC.
func (d *driver) getGRPC(ctx context.Context, t target, id string) (*taskState, error) {
	c := d.grpc.clients[d.grpc.next.Add(1)%uint64(len(d.grpc.clients))]
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+t.token)
	task, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: t.tenant, Id: id})
	if err != nil {
		return nil, err
	}
	out := &taskState{ID: task.GetId()}
	out.Status.State = task.GetStatus().GetState().String()
	return out, nil
}

// restBody is the HTTP+JSON body of a send: the JSON-RPC params alone.
func restBody(rpc []byte) []byte {
	const prefix = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`
	return bytes.TrimSuffix(bytes.TrimPrefix(rpc, []byte(prefix)), []byte("}"))
}
