package server_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/switchboard-dev/switchboard/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// TestGRPCOverTLS: a2a-go's gRPC client reaches an agent's address on the
// server's HTTPS listener: TLS with h2 chosen by ALPN, the card read over
// HTTPS naming the gRPC interface and its tenant, and a task sent over
// gRPC read back over JSON-RPC.
func TestGRPCOverTLS(t *testing.T) {
	s, roots := runSelfSigned(t, "grpc.test", server.Config{RatePerMinute: 0, MaxOpenTasks: -1, MaxPeerBytes: -1})
	owner := s.GeneratedOwnerToken
	call(t, s, "POST", "/agents", owner, `{"handle":"inbox","mode":"inbox"}`, http.StatusCreated)
	peer := call(t, s, "POST", "/agents/inbox/tokens", owner, `{"label":"bob"}`, http.StatusCreated)["token"].(string)
	addr := strings.TrimPrefix(s.HTTPSURL(), "https://")
	_, port, _ := net.SplitHostPort(addr)

	// The HTTPS listener offers h2 by ALPN, which gRPC requires.
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "grpc.test", RootCAs: roots, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := conn.ConnectionState().NegotiatedProtocol; got != "h2" {
		t.Fatalf("ALPN chose %q, want h2", got)
	}
	conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := httpsClient(s, roots)
	hc.Transport.(*http.Transport).TLSClientConfig.ServerName = "grpc.test"
	card, err := (&agentcard.Resolver{Client: hc}).Resolve(ctx, "https://grpc.test:"+port+"/a/inbox")
	if err != nil {
		t.Fatal(err)
	}
	var iface *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == a2a.TransportProtocolGRPC {
			iface = i
		}
	}
	if iface == nil || !strings.HasSuffix(iface.URL, ":"+port) || iface.Tenant != "inbox" {
		t.Fatalf("the card read over HTTPS names the gRPC interface %+v, want the HTTPS port and the tenant inbox", iface)
	}

	creds := credentials.NewTLS(&tls.Config{ServerName: "grpc.test", RootCAs: roots})
	f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2agrpc.WithGRPCTransport(
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr) // the card's host, on loopback
		}),
		grpc.WithUnaryInterceptor(func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, o ...grpc.CallOption) error {
			return inv(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+peer), m, req, reply, cc, o...)
		})))
	// grpc.test does not resolve: the name goes to the dialer as it is.
	dial := *iface
	dial.URL = "passthrough:///" + iface.URL
	c, err := f.CreateFromEndpoints(ctx, []*a2a.AgentInterface{&dial})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("over gRPC and TLS"))})
	if err != nil {
		t.Fatalf("gRPC send over TLS: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("gRPC send over TLS: %T, want a task", res)
	}
	if got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil || got.ID != task.ID {
		t.Fatalf("gRPC get over TLS: %v, %v", got, err)
	}
	if got := rpc(t, s, peer, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+string(task.ID)+`"}}`); got["error"] != nil {
		t.Fatalf("JSON-RPC get of the gRPC task: %v", got)
	}
}
