package front

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// BenchmarkPassSend measures a pass-through front's send: the request
// written to the upstream, its answer read and made ours (ids, secrets),
// over loopback HTTP. The upstream answers every send with the same
// completed task (the 1 KiB message echoed as its artifact and history)
// and parses nothing, so what is counted is the front's and net/http's.
func BenchmarkPassSend(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]
	answer := `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"up-task","contextId":"up-ctx","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-05T10:00:00Z"},` +
		`"artifacts":[{"artifactId":"a-1","parts":[{"text":"` + text + `"}]}],` +
		`"history":[{"messageId":"m-1","role":"ROLE_USER","taskId":"up-task","contextId":"up-ctx","parts":[{"text":"` + text + `"}]}]}}}`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == a2asrv.WellKnownAgentCardPath {
			a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{Name: "fixed", Version: "1.0.0",
				SupportedInterfaces: []*a2a.AgentInterface{{URL: srv.URL + "/invoke", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
				DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}).ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	opts := ClientOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}}
	store := &oneFront{f: switchboard.Front{AgentID: "a", Upstream: srv.URL + "/invoke", Record: switchboard.FrontRecordNone,
		Credentials: switchboard.FrontCredentials{Bearer: "owner-secret-0123456789"}, UpdatedAt: time.Now()}}
	s := NewService(store, nil, opts, 0, slog.New(slog.DiscardHandler))
	defer s.Close()
	ctx := context.Background()
	peer := switchboard.Peer{AgentID: "a", ID: "bob", Label: "bob"}
	b.ReportAllocs()
	for b.Loop() {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		t, err := s.PassSend(ctx, "a", peer, &a2a.SendMessageRequest{Message: m})
		if err != nil || t.Status.State != a2a.TaskStateCompleted {
			b.Fatalf("PassSend: %+v, %v", t, err)
		}
	}
}
