package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/switchboard-dev/switchboard/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// TestBindingsOnTheListener: the server's own plain listener carries all
// three A2A bindings to one agent: gRPC over h2c (named by the card's
// tenant), HTTP+JSON and JSON-RPC, on one task.
func TestBindingsOnTheListener(t *testing.T) {
	s := run(t, server.Config{RatePerMinute: 0, MaxOpenTasks: -1, MaxPeerBytes: -1})
	owner := s.GeneratedOwnerToken
	call(t, s, "POST", "/agents", owner, `{"handle":"inbox","mode":"inbox"}`, http.StatusCreated)
	peer := call(t, s, "POST", "/agents/inbox/tokens", owner, `{"label":"bob"}`, http.StatusCreated)["token"].(string)
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, s.URL()+"/a/inbox")
	if err != nil {
		t.Fatal(err)
	}
	withToken := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+peer)
	}
	f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, o ...grpc.CallOption) error {
			return inv(withToken(ctx), m, req, reply, cc, o...)
		})))
	c, err := f.CreateFromCard(ctx, card)
	if err != nil {
		t.Fatalf("gRPC client from the card: %v", err)
	}
	defer c.Destroy()
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("over gRPC"))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatalf("gRPC send over h2c: %v", err)
	}
	id := string(res.(*a2a.Task).ID)
	req, _ := http.NewRequest("GET", s.URL()+"/a/inbox/tasks/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+peer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP+JSON get of the gRPC task: %d", resp.StatusCode)
	}
	if got := rpc(t, s, peer, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`); got["error"] != nil ||
		!strings.Contains(got["result"].(map[string]any)["id"].(string), id) {
		t.Fatalf("JSON-RPC get of the gRPC task: %v", got)
	}
}
