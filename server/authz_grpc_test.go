package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestAuthorizationMatrixGRPC is the authorization matrix's gRPC dimension:
// the binding has no route of its own (one listener, the agent named by the
// request's tenant), so every credential asks, over gRPC, for the task of
// A's peer at A's agent and for the task of A's community peer at A's
// community, and must get what the HTTP+JSON binding's row for the same
// question gives it (401 is UNAUTHENTICATED, 404 NOT_FOUND). Another's task
// and a disabled account's agent read exactly as missing ones.
func TestAuthorizationMatrixGRPC(t *testing.T) {
	rows := authzRows()
	s := newAuthzServer(t, "")
	srv := httptest.NewUnstartedServer(s.API.AgentDomains(s.API)) // h2c, as the plain listener
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	facetest.Must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := a2apb.NewA2AServiceClient(conn)
	getTask := func(auth, tenant string, id a2a.TaskID) (*a2apb.Task, error) {
		ctx := context.Background()
		if auth != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
		}
		return client.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: tenant, Id: string(id)})
	}
	codeOf := map[int]codes.Code{http.StatusOK: codes.OK, http.StatusUnauthorized: codes.Unauthenticated, http.StatusNotFound: codes.NotFound}

	b, d := s.estate("gb", false), s.estate("gd", true)
	addresses := []struct {
		name, row string
		tenant    func(e *estate) string
		task      func(e *estate) a2a.TaskID
	}{
		{"agent", "/a/{handle}/tasks/{rest...}", func(e *estate) string { return e.agent.Handle }, func(e *estate) a2a.TaskID { return e.task }},
		{"community", "/c/{name}/tasks/{rest...}", func(e *estate) string { return e.community }, func(e *estate) a2a.TaskID { return e.communityTask }},
	}
	for _, addr := range addresses {
		for i, c := range creds {
			t.Run(addr.name+"/"+string(c), func(t *testing.T) {
				a := s.estate(fmt.Sprintf("g%s%d", addr.name[:1], i), false)
				e := a
				if c.disabled() {
					e = d
				}
				auth := c.authorization(a, b, d, s.OwnerToken(s.Operator))
				task, err := getTask(auth, addr.tenant(e), addr.task(e))
				want, ok := codeOf[rows[addr.row].want[c]]
				if !ok {
					t.Fatalf("the HTTP+JSON row wants %d, which has no gRPC code here", rows[addr.row].want[c])
				}
				if got := status.Code(err); got != want {
					t.Fatalf("GetTask as %s: %v, want %s", c, err, want)
				}
				switch {
				case want == codes.OK && task.GetId() != string(addr.task(e)):
					t.Errorf("GetTask as %s: task %q, want %q", c, task.GetId(), addr.task(e))
				case want == codes.NotFound && c.disabled():
					_, missing := getTask(auth, addr.tenant(e.ghost()), addr.task(e))
					sameStatus(t, c, err, missing)
				case want == codes.NotFound:
					_, missing := getTask(auth, addr.tenant(e), addr.task(e.ghostTask()))
					sameStatus(t, c, err, missing)
				}
			})
		}
	}
}

// sameStatus checks that a refusal reads exactly as the answer about a
// missing object.
func sameStatus(t *testing.T, c cred, refused, missing error) {
	t.Helper()
	r, m := status.Convert(refused), status.Convert(missing)
	if r.Code() != m.Code() || r.Message() != m.Message() {
		t.Errorf("as %s: another's object answers %s %q, a missing one %s %q", c, r.Code(), r.Message(), m.Code(), m.Message())
	}
}
