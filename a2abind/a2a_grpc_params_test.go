package a2abind_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGRPCOptionalParams: a negative history_length on GetTask and
// ListTasks, which the SDK's conversion from the proto drops, is still
// refused over gRPC, as over JSON-RPC and HTTP+JSON. A task list's
// page_size 0 is the default page size: the a2a-go gRPC client sends it
// when its caller names none.
func TestGRPCOptionalParams(t *testing.T) {
	h := facetest.New(t)
	srv := h2cServer(t, h)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	id := h.Send(g, tok, "m1", "x")
	conn, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "http://"), bearerDial(tok)...)
	facetest.Must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c := a2apb.NewA2AServiceClient(conn)
	ctx := context.Background()
	n := func(v int32) *int32 { return &v }

	refused := map[string]func() error{
		"ListTasks history_length -1": func() error {
			_, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "alice", HistoryLength: n(-1)})
			return err
		},
		"GetTask history_length -1": func() error {
			_, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: "alice", Id: id, HistoryLength: n(-1)})
			return err
		},
	}
	for name, call := range refused {
		if err := call(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: got %v, want InvalidArgument", name, err)
		}
	}

	list, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "alice", PageSize: n(1), HistoryLength: n(0)})
	if err != nil || len(list.GetTasks()) != 1 {
		t.Fatalf("ListTasks page_size 1: %v %v", list, err)
	}
	for _, size := range []*int32{nil, n(0)} {
		if list, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "alice", PageSize: size}); err != nil || list.GetPageSize() != 50 {
			t.Fatalf("ListTasks page_size %v: %v %v, want the default page of 50", size, list, err)
		}
	}
	task, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: "alice", Id: id, HistoryLength: n(0)})
	if err != nil || len(task.GetHistory()) != 0 {
		t.Fatalf("GetTask history_length 0: %v %v", task, err)
	}
}

// TestGRPCDefaultAgent: with a default agent (serve --default-agent), a
// gRPC call on the deployment's host without a tenant reaches that agent,
// as a JSON-RPC call to the root does; a tenant still names any other.
func TestGRPCDefaultAgent(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.DefaultAgent = "alice" }))
	srv := h2cServer(t, h)
	alice, bob := h.Agent("alice"), h.Agent("bob")
	aliceTok, bobTok := h.PeerToken(alice, "p"), h.PeerToken(bob, "q")
	ctx := context.Background()
	send := func(token, tenant string) (string, error) {
		conn, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "http://"), bearerDial(token)...)
		facetest.Must(t, err)
		defer conn.Close()
		resp, err := a2apb.NewA2AServiceClient(conn).SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: tenant,
			Message:       &a2apb.Message{MessageId: "m-" + tenant, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}},
			Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true}})
		return resp.GetTask().GetId(), err
	}
	agentOf := func(id string) string {
		task, err := h.DB.FindTaskByID(ctx, a2a.TaskID(id))
		if err != nil {
			return err.Error()
		}
		return task.AgentID
	}
	id, err := send(aliceTok, "")
	if err != nil || agentOf(id) != alice.ID {
		t.Fatalf("no tenant: task %q, err %v; want a task of the default agent", id, err)
	}
	if id, err := send(bobTok, "bob"); err != nil || agentOf(id) != bob.ID {
		t.Fatalf("tenant bob: task %q, err %v", id, err)
	}
	if _, err := send(bobTok, ""); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("bob's token without a tenant: %v, want Unauthenticated (it is alice's address)", err)
	}
}
