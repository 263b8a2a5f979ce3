package mcpserver_test

import (
	"context"
	"database/sql"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// remoteAgent is an A2A server on loopback (a2a-go) that takes one
// bearer token: the agent a synced alias names.
type remoteAgent struct {
	srv   *httptest.Server
	token string

	mu     sync.Mutex
	seen   []string // guarded by mu: the Authorization header of each call
	agents []string // guarded by mu: the User-Agent of each call
}

// newRemoteAgent starts a remote agent speaking version ("1.0" or "0.3")
// that answers "remote: " + text, after the send returned.
func newRemoteAgent(t *testing.T, version, token string) *remoteAgent {
	t.Helper()
	r := &remoteAgent{token: token}
	mux := http.NewServeMux()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			r.mu.Lock()
			r.seen = append(r.seen, req.Header.Get("Authorization"))
			r.agents = append(r.agents, req.Header.Get("User-Agent"))
			r.mu.Unlock()
			if req.Header.Get("Authorization") != "Bearer "+r.token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		mux.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	handler := a2asrv.NewHandler(r)
	iface := &a2a.AgentInterface{URL: r.srv.URL + "/invoke", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(version)}
	card := &a2a.AgentCard{Name: "Remote " + version, Description: "answers", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{iface}, DefaultInputModes: []string{"text"}, DefaultOutputModes: []string{"text"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"test"}}}}
	if version == "0.3" {
		mux.Handle("/invoke", a2av0.NewJSONRPCHandler(handler))
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	} else {
		mux.Handle("/invoke", a2asrv.NewJSONRPCHandler(handler))
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	}
	return r
}

// Execute submits the task, works, then answers with an artifact.
func (r *remoteAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("remote: "+text)), nil) {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		}
	}
}

// Cancel cancels the task.
func (r *remoteAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// authorizations returns the Authorization headers the agent was sent.
func (r *remoteAgent) authorizations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// sync uploads an alias for the agent through the owner API.
func (w *world) sync(handle, alias, url, token string) {
	w.t.Helper()
	r := w.do("PUT", "/agents/"+handle+"/peers/"+alias, w.ownerToken, `{"url":"`+url+`","token":"`+token+`"}`, nil)
	if r.status/100 != 2 {
		w.t.Fatalf("sync %s: HTTP %d %s", alias, r.status, r.body)
	}
}

// toolError calls a tool that must fail and returns its text.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %v %+v", name, args, err, res)
	}
	return text(res)
}

// TestSendToSyncedAlias: send reaches a remote A2A agent (1.0 and 0.3)
// by a synced alias, with the alias's token, ahead of a local agent of the
// same handle; poll_outbound reads its answer there; list_peers shows the
// alias but never the token; the account endpoint does the same.
func TestSendToSyncedAlias(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		for _, version := range []string{"1.0", "0.3"} {
			t.Run(version, func(t *testing.T) {
				w := newWorld(t, kind, nil)
				remote := newRemoteAgent(t, version, "sbp_remote-secret")
				alice := w.agent("alice")
				w.agent("bob") // a local handle of the alias's name
				w.sync("alice", "bob", remote.srv.URL, remote.token)
				cs := connect(t, w.mcpURL(alice), w.mcpToken(alice, "claude"), "2025-06-18")

				peers := call(t, cs, "list_peers", nil)
				if s := mustJSON(t, peers); !strings.Contains(s, `"alias":"bob"`) || !strings.Contains(s, `"hasToken":true`) || strings.Contains(s, remote.token) {
					t.Fatalf("list_peers: %s", s)
				}
				sent := call(t, cs, "send", map[string]any{"to": "bob", "text": "hello"})
				if sent["target"] != "bob" || !strings.HasPrefix(sent["endpoint"].(string), remote.srv.URL) || sent["taskId"] == "" {
					t.Fatalf("send: %v", sent)
				}
				remote.mu.Lock()
				uas := append([]string(nil), remote.agents...)
				remote.mu.Unlock()
				for _, ua := range uas {
					if ua != "switchboard-send" {
						t.Errorf("User-Agent %q, want switchboard-send", ua)
					}
				}
				if got := remote.authorizations(); len(got) == 0 || got[len(got)-1] != "Bearer "+remote.token {
					t.Fatalf("the remote agent was sent %q", got)
				}
				var polled map[string]any
				testwait.For(t, "the remote task to complete", func() bool {
					polled = call(t, cs, "poll_outbound", map[string]any{"taskId": sent["taskId"]})
					return polled["state"] == "completed"
				})
				if !strings.Contains(polled["answer"].(string), "remote: hello") || polled["untrusted"] != true {
					t.Fatalf("poll_outbound: %v", polled)
				}

				// The account endpoint, with its agent argument.
				r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["alice"]}`, nil)
				acct := connect(t, w.srv.URL+"/mcp", r.json["token"].(string), "2025-06-18")
				sent = call(t, acct, "send", map[string]any{"agent": "alice", "to": "bob", "text": "again"})
				testwait.For(t, "the second remote task to complete", func() bool {
					polled = call(t, acct, "poll_outbound", map[string]any{"agent": "alice", "outboundId": sent["id"]})
					return polled["state"] == "completed"
				})
				if !strings.Contains(polled["answer"].(string), "remote: again") {
					t.Fatalf("poll_outbound on the account endpoint: %v", polled)
				}

				// A token the remote agent refuses: the send fails, is
				// recorded, and says what to do.
				w.sync("alice", "stale", remote.srv.URL, "sbp_wrong")
				if msg := toolError(t, cs, "send", map[string]any{"to": "stale", "text": "hi"}); !strings.Contains(msg, "refused the token") {
					t.Fatalf("a refused token: %s", msg)
				}
				if strings.Contains(mustJSON(t, call(t, cs, "list_peers", nil)), "sbp_wrong") {
					t.Fatal("list_peers shows a token")
				}
			})
		}
	})
}

// TestSyncedAliasUnreadable: a token that no longer opens on the server
// (its keys changed) makes send and poll_outbound say to sync again, and
// list_peers show hasToken false.
func TestSyncedAliasUnreadable(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newWorld(t, kind, nil)
		remote := newRemoteAgent(t, "1.0", "sbp_remote-secret")
		alice := w.agent("alice")
		w.sync("alice", "bob", remote.srv.URL, remote.token)
		cs := connect(t, w.mcpURL(alice), w.mcpToken(alice, "claude"), "2026-07-28")
		sent := call(t, cs, "send", map[string]any{"to": "bob", "text": "hello"})

		// As if sealed with a key this server does not hold.
		conn, err := sql.Open(w.driver, w.dsn)
		must(t, err)
		defer conn.Close()
		_, err = conn.Exec(`UPDATE outbound_peers SET token = 'sb1.deadbeef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' WHERE alias = 'bob'`)
		must(t, err)

		if s := mustJSON(t, call(t, cs, "list_peers", nil)); !strings.Contains(s, `"hasToken":false`) {
			t.Fatalf("list_peers: %s", s)
		}
		n := len(remote.authorizations())
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"send", map[string]any{"to": "bob", "text": "again"}},
			{"poll_outbound", map[string]any{"taskId": sent["taskId"]}},
		} {
			if msg := toolError(t, cs, c.tool, c.args); !strings.Contains(msg, "switchboard peers sync --agent alice bob") {
				t.Fatalf("%s with an unreadable token: %s", c.tool, msg)
			}
		}
		if got := len(remote.authorizations()); got != n {
			t.Fatalf("the remote agent was called %d more times", got-n)
		}
	})
}
