package a2abind_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// h2cServer serves the harness's API on a second loopback listener that
// takes HTTP/1.1 and unencrypted HTTP/2, as the server's plain listener
// does.
func h2cServer(t *testing.T, h *facetest.Harness) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h.API.AgentDomains(h.API))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// bearerDial returns the dial options of a gRPC client that presents
// token (none if empty) on every call.
func bearerDial(token string) []grpc.DialOption {
	add := func(ctx context.Context) context.Context {
		if token == "" {
			return ctx
		}
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(add(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(add(ctx), desc, cc, method, opts...)
		}),
	}
}

// grpcClient resolves the card at addr and returns an a2a-go client that
// can speak only gRPC: it dials the card's gRPC interface and sends its
// tenant.
func grpcClient(t *testing.T, addr, token string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, addr)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(bearerDial(token)...))
	c, err := f.CreateFromCard(ctx, card)
	if err != nil {
		t.Fatalf("gRPC client: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestGRPCBinding drives every method of the gRPC binding with the a2a-go
// client's gRPC transport over h2c against a live server.
func TestGRPCBinding(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	srv := h2cServer(t, h)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	c := grpcClient(t, srv.URL+"/a/alice", tok)
	ctx := context.Background()

	res, err := c.SendMessage(ctx, textMessage("m-grpc-1", "hello"))
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("send: %#v", res)
	}
	t.Run("IdempotentByMessageID", func(t *testing.T) {
		again, err := c.SendMessage(ctx, textMessage("m-grpc-1", "hello"))
		if err != nil || again.(*a2a.Task).ID != task.ID {
			t.Fatalf("resend: %v %v, want task %s", again, err, task.ID)
		}
	})
	t.Run("GetAndList", func(t *testing.T) {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.ID != task.ID {
			t.Fatalf("get: %v %v", got, err)
		}
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || list.TotalSize != 1 || list.Tasks[0].ID != task.ID {
			t.Fatalf("list: %+v %v", list, err)
		}
	})
	t.Run("PushConfig", func(t *testing.T) {
		pc, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "hook", URL: "https://peer.example/hook"})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(all) != 1 {
			t.Fatalf("list: %v %v", all, err)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: pc.ID}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		var states []a2a.TaskState
		for ev, err := range c.SendStreamingMessage(ctx, textMessage("m-grpc-stream", "stream me")) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				states = append(states, ev.Status.State)
				h.Reply(string(ev.ID), a2a.TaskStateCompleted, "done")
			case *a2a.TaskStatusUpdateEvent:
				states = append(states, ev.Status.State)
			}
		}
		if len(states) < 2 || states[0] != a2a.TaskStateSubmitted || states[len(states)-1] != a2a.TaskStateCompleted {
			t.Fatalf("stream states %v", states)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %v %v", got, err)
		}
	})
	t.Run("AnotherPeersTaskIsNotFound", func(t *testing.T) {
		carol := grpcClient(t, srv.URL+"/a/alice", h.PeerToken(g, "carol"))
		if _, err := carol.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("carol gets bob's task: %v, want not found", err)
		}
	})
	t.Run("SameTaskOverHTTPJSON", func(t *testing.T) {
		got, err := restClient(t, h.Addr(g), tok).GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("REST get: %v %v", got, err)
		}
	})
}

// TestGRPCBindingRefusals: what the gRPC binding refuses, it refuses with
// a gRPC status, and stores nothing.
func TestGRPCBindingRefusals(t *testing.T) {
	h := facetest.New(t)
	srv := h2cServer(t, h)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	carol := h.Agent("carol")
	carolTok := h.PeerToken(carol, "dave")
	target := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	send := func(token, tenant, text string) error {
		c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{{URL: target, ProtocolBinding: a2a.TransportProtocolGRPC, Tenant: tenant, ProtocolVersion: "1.0"}},
			a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(bearerDial(token)...))
		facetest.Must(t, err)
		defer c.Destroy()
		_, err = c.SendMessage(ctx, textMessage("m-refused", text))
		return err
	}
	cases := map[string]struct {
		token, tenant, text string
		want                error  // the a2a-go client's error
		says                string // in its message
	}{
		"Unauthenticated": {"", "alice", "hi", a2a.ErrUnauthenticated, "Bearer"},
		"BadToken":        {"sb_peer_nope", "alice", "hi", a2a.ErrUnauthenticated, "not valid"},
		"NoTenant":        {tok, "", "hi", a2a.ErrInvalidParams, "tenant is required"},
		"UnknownTenant":   {tok, "nobody", "hi", a2a.ErrTaskNotFound, "no agent or community"},
		// A peer token opens its own agent's tenant only.
		"AnotherAgentsToken":  {carolTok, "alice", "hi", a2a.ErrUnauthenticated, "not valid"},
		"AnotherAgentsTenant": {tok, "carol", "hi", a2a.ErrUnauthenticated, "not valid"},
		"Oversized":           {tok, "alice", strings.Repeat("x", 1<<20), a2a.ErrInternalError, "larger than max"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := send(tc.token, tc.tenant, tc.text)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
	for addr, token := range map[string]string{h.Addr(g): tok, h.Addr(carol): carolTok} {
		list, err := restClient(t, addr, token).ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || list.TotalSize != 0 {
			t.Fatalf("refused calls stored tasks at %s: %+v %v", addr, list, err)
		}
	}
}

// TestBindingsAtACommunity: a community's address speaks HTTP+JSON under
// it and gRPC with the community's name as tenant, as its card says; the
// community's peer reads its task over either.
func TestBindingsAtACommunity(t *testing.T) {
	h := facetest.New(t)
	srv := h2cServer(t, h)
	_, alice := h.Account("alice")
	worker, _ := h.NetAgent(alice, "worker", "connector", "code", "lab")
	h.Live(worker)
	if r := h.Owner("POST", "/agents/worker/approve", h.OperatorToken, nil); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	r := h.Owner("POST", "/communities/lab/tokens", h.OperatorToken, map[string]any{"label": "dave"})
	tok, _ := r.JSON["token"].(string)
	if tok == "" {
		t.Fatalf("community token: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	rest := restClient(t, srv.URL+"/c/lab", tok)
	now := func(id, text string) *a2a.SendMessageRequest { // the worker answers later
		req := textMessage(id, text)
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		return req
	}
	res, err := rest.SendMessage(ctx, now("m-lab-1", "hello lab"))
	if err != nil {
		t.Fatalf("HTTP+JSON send to the community: %v", err)
	}
	id := res.(*a2a.Task).ID
	g := grpcClient(t, srv.URL+"/c/lab", tok)
	got, err := g.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil || got.ID != id {
		t.Fatalf("gRPC get at the community: %v %v", got, err)
	}
	res, err = g.SendMessage(ctx, now("m-lab-2", "hello again"))
	if err != nil {
		t.Fatalf("gRPC send to the community: %v", err)
	}
	if list, err := rest.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil || list.TotalSize != 2 {
		t.Fatalf("the community peer's tasks: %+v %v", list, err)
	}
	// The worker's own peers do not open the community's address.
	other := grpcClient(t, srv.URL+"/c/lab", h.PeerToken(worker, "bob"))
	if _, err := other.GetTask(ctx, &a2a.GetTaskRequest{ID: res.(*a2a.Task).ID}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("an agent's peer token at the community: %v, want unauthenticated", err)
	}
}

// TestGRPCOnAnAgentDomain: on an agent domain the domain names the agent;
// a call needs no tenant, and a tenant of another agent is refused.
func TestGRPCOnAnAgentDomain(t *testing.T) {
	h := facetest.NewDomain(t)
	srv := h2cServer(t, h)
	_, tok := withDomainAgent(t, h)
	h.Agent("carl")
	ctx := context.Background()
	client := func(tenant string) *a2aclient.Client {
		opts := append(bearerDial(tok), grpc.WithAuthority("bot.example.com"))
		c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{{URL: strings.TrimPrefix(srv.URL, "http://"),
			ProtocolBinding: a2a.TransportProtocolGRPC, Tenant: tenant, ProtocolVersion: "1.0"}},
			a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(opts...))
		facetest.Must(t, err)
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	res, err := client("").SendMessage(ctx, textMessage("m-dom-grpc", "hi"))
	if err != nil {
		t.Fatalf("gRPC send on the domain: %v", err)
	}
	if got, err := client("bob").GetTask(ctx, &a2a.GetTaskRequest{ID: res.(*a2a.Task).ID}); err != nil || got.ID != res.(*a2a.Task).ID {
		t.Fatalf("gRPC get on the domain, its agent as tenant: %v %v", got, err)
	}
	if _, err := client("carl").SendMessage(ctx, textMessage("m-dom-carl", "hi")); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another agent's tenant on the domain: %v, want not found", err)
	}
}
