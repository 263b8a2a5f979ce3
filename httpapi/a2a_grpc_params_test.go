package httpapi_test

import (
	"context"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGRPCOptionalParams: what the SDK's conversion from the proto drops is
// still refused over gRPC, as over JSON-RPC and HTTP+JSON: a task list that
// names page_size 0, and a negative history_length on GetTask and
// ListTasks. The same requests without those fields are answered.
func TestGRPCOptionalParams(t *testing.T) {
	h := newHarness(t)
	srv := h2cServer(t, h)
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	id := h.send(g, tok, "m1", "x")
	conn, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "http://"), bearerDial(tok)...)
	must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c := a2apb.NewA2AServiceClient(conn)
	ctx := context.Background()
	n := func(v int32) *int32 { return &v }

	refused := map[string]func() error{
		"ListTasks page_size 0": func() error {
			_, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "alice", PageSize: n(0)})
			return err
		},
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
	if _, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "alice"}); err != nil {
		t.Fatalf("ListTasks without page_size: %v", err)
	}
	task, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: "alice", Id: id, HistoryLength: n(0)})
	if err != nil || len(task.GetHistory()) != 0 {
		t.Fatalf("GetTask history_length 0: %v %v", task, err)
	}
}
