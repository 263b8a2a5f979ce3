package server_test

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

	"github.com/switchboard-dev/switchboard/internal/facetest"
	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/reach"
	"github.com/switchboard-dev/switchboard/wake"
)

// This file holds what the authorization matrix (authz_test.go) stands on:
// the credentials it presents, the accounts whose objects fill the paths,
// and a server that serves every route.

// cred is one kind of credential the matrix presents.
type cred string

// The credentials, each sent as "Authorization: Bearer <secret>". "A" is
// the account that owns the objects the path names, "B" another account,
// "D" a disabled account.
const (
	credNone        cred = "none"                 // no Authorization header
	credMalformed   cred = "malformed"            // "Bearer x"
	credPeerRevoked cred = "peer-revoked"         // a revoked peer token of A's agent
	credPeerOther   cred = "peer-of-other-agent"  // a peer token of B's agent
	credPeerSibling cred = "peer-other-label"     // a peer token of A's agent, not the task's peer
	credPeer        cred = "peer"                 // the peer token of A's agent that sent A's task
	credAgentOther  cred = "agent-of-other-agent" // the agent token of B's agent
	credAgent       cred = "agent"                // the agent token of A's agent
	credPushOther   cred = "push-of-other-agent"  // the push token of B's outbound record
	credPush        cred = "push"                 // the push token of A's outbound record
	// A peer token of B's community, and of A's (which sent A's
	// community task).
	credCommunityOther cred = "community-of-other-account"
	credCommunity      cred = "community"
	credOwnerOther     cred = "owner-of-other-account"
	credOwner          cred = "owner" // A's owner token
	credOperator       cred = "operator"
	// The disabled account's credentials, presented on its own objects: D
	// fills the path.
	credOwnerDisabled cred = "owner-disabled"
	credPeerDisabled  cred = "peer-disabled"
	credAgentDisabled cred = "agent-disabled"
	// MCP tokens: of B's agent, and of A's agent.
	credMCPOther cred = "mcp-of-other-agent"
	credMCP      cred = "mcp"
	// An account MCP token of A's, acting for A's connector agent.
	credMCPAccount cred = "mcp-account"
)

// creds lists every credential, in the order the matrix presents them.
var creds = []cred{
	credNone, credMalformed, credPeerRevoked, credPeerOther, credPeerSibling, credPeer,
	credAgentOther, credAgent, credPushOther, credPush, credCommunityOther, credCommunity, credOwnerOther, credOwner, credOperator,
	credOwnerDisabled, credPeerDisabled, credAgentDisabled, credMCPOther, credMCP, credMCPAccount,
}

// disabled reports whether the credential is the disabled account's, whose
// own objects then fill the path.
func (c cred) disabled() bool {
	return c == credOwnerDisabled || c == credPeerDisabled || c == credAgentDisabled
}

// entitled reports whether the credential may see the private parts of A's
// objects (its task's text, its agent's id, its outbound record).
func (c cred) entitled() bool {
	return c == credOwner || c == credOperator || c == credPeer
}

// authorization returns the Authorization header the credential sends, or
// "" for none. a is the owning account, b the other, d the disabled one.
func (c cred) authorization(a, b, d *estate, operatorToken string) string {
	secret := map[cred]string{
		credMalformed: "x", credPeerRevoked: a.revokedToken, credPeerOther: b.peerToken, credPeerSibling: a.siblingToken,
		credPeer: a.peerToken, credAgentOther: b.agentToken, credAgent: a.agentToken, credPushOther: b.pushToken,
		credPush: a.pushToken, credCommunityOther: b.communityToken, credCommunity: a.communityToken, credOwnerOther: b.ownerToken, credOwner: a.ownerToken, credOperator: operatorToken,
		credOwnerDisabled: d.ownerToken, credPeerDisabled: d.peerToken, credAgentDisabled: d.agentToken,
		credMCPOther: b.mcpToken, credMCP: a.mcpToken, credMCPAccount: a.mcpAccountToken,
	}[c]
	if secret == "" {
		return ""
	}
	return "Bearer " + secret
}

// estate is an account with one of everything a path can name: the
// objects the matrix probes.
type estate struct {
	name       string
	acct       *switchboard.Account
	ownerToken string
	// agent is a connector agent: the address, the WebSocket, the task and
	// the outbound record are its.
	agent      *switchboard.Agent
	agentToken string
	webhook    *switchboard.Agent // a webhook agent, for its secret
	// peerToken sent task; siblingToken is another peer of the agent;
	// revokedToken was revoked; spare labels a token there to revoke.
	peerToken, siblingToken, revokedToken, spare string

	task a2a.TaskID
	// community is the community both agents are in; communityToken a
	// peer token of it (label "carol"), which sent communityTask (to the
	// webhook agent, the member discovery chose); agentTask is a task the
	// connector agent sent the webhook agent by name.
	community      string
	communityToken string
	communityTask  a2a.TaskID
	agentTask      a2a.TaskID
	contextID      string
	note           string // the text of the task's message
	outbound       string // the id of the agent's outbound record
	remote         string // the remote task id of the record
	pushToken      string // the record's push token
	userCode       string // a pending pairing request of the agent
	// mcpToken is an MCP token of the connector agent; mcpID its id.
	mcpToken, mcpID string
	// mcpAccountToken is an account MCP token acting for the agent.
	mcpAccountToken string
}

// markers are strings of the estate that only an entitled caller may see.
func (e *estate) markers() []string { return []string{e.agent.ID, e.note, e.outbound} }

// ghost returns the estate with every object it names replaced by one that
// does not exist, to compare "not yours" with "not found".
func (e *estate) ghost() *estate {
	g := *e
	g.acct = &switchboard.Account{ID: switchboard.NewID()}
	g.agent = &switchboard.Agent{ID: switchboard.NewID(), Handle: "ghost-" + e.name}
	g.webhook = &switchboard.Agent{ID: switchboard.NewID(), Handle: "ghost-" + e.name + "-hook"}
	g.task, g.outbound, g.contextID, g.spare = a2a.TaskID(switchboard.NewID()), switchboard.NewID(), "ghost", "ghost"
	g.userCode = "ZZZZ-2222"
	g.community, g.agentTask, g.communityTask = "ghost-"+e.community, a2a.TaskID(switchboard.NewID()), a2a.TaskID(switchboard.NewID())
	g.mcpID = switchboard.TokenID(switchboard.HashToken(switchboard.NewID()))
	return &g
}

// ghostTask returns the estate with its task replaced by one that does not
// exist: the same address, asked about a missing task.
func (e *estate) ghostTask() *estate {
	g := *e
	g.task = a2a.TaskID(switchboard.NewID())
	return &g
}

// authzServer is a harness that serves every route: with a hub at
// /connect, wakes reaching a loopback receiver, and metrics.
type authzServer struct {
	*facetest.Harness
	wakeURL string // a receiver that answers 202
}

func newAuthzServer(t *testing.T, defaultAgent string, opts ...facetest.Option) *authzServer {
	t.Helper()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "woken")
	}))
	t.Cleanup(recv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := membus.New()
	reg := metrics.NewRegistry()
	var connect *hub.Hub
	h := facetest.New(t, append([]facetest.Option{
		facetest.WithConfig(func(c *httpapi.Config) { c.DefaultAgent, c.PushNotifications = defaultAgent, true }),
		facetest.WithPairing(pairing.Config{MaxPending: 1000, MaxPendingPerRequester: 1000, MaxPerHour: 1000, MaxPerRequester: 1000}),
		facetest.WithDeps(func(d *assembly.APIDeps) {
			store := d.Agents.(switchboard.Store)
			opts := netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
			d.Wakes = wake.NewService(store, store, bus, wake.New(opts), log)
			d.Wakes.CheckTemplate = wake.CheckTemplate
			d.Wakes.AllowHTTP = opts.AllowsPlainHTTP()
			connect = hub.New(hub.Deps{Service: d.Tasks, Agents: d.Agents, Tokens: d.Tokens, Bus: bus, Logger: log,
				InstanceID: d.Tasks.InstanceID}, hub.Config{})
			d.Connect = connect
			d.MetricsHandler = reg
			d.MCP = mcpserver.New(mcpserver.Deps{Accounts: d.Accounts, Agents: d.Agents, Tokens: d.Tokens, Tasks: d.Tasks, Outbox: d.Outbox,
				Network: d.Network, Limiter: d.Limiter, Logger: log}, mcpserver.Config{OAuth: true})
			d.OutboundPeers = outpeer.New(store, front.ClientOptions{})
			d.Reach = reach.New(reach.Config{})
			d.OAuth = mcpauth.New(mcpauth.Deps{Store: store, Tokens: d.Tokens, Logger: log}, mcpauth.Config{RegistrationsPerHour: 1000})
		})}, opts...)...)
	reg.MustRegister(h.API.Metrics()...)
	// Registered after the harness's, so run before it: the connections
	// end while the store is open.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = connect.Shutdown(ctx)
		_ = bus.Close()
	})
	return &authzServer{Harness: h, wakeURL: recv.URL + "/wake"}
}

// estate makes an account named name with its objects; a disabled one is
// disabled once they exist.
func (s *authzServer) estate(name string, disabled bool) *estate {
	s.T.Helper()
	ctx := context.Background()
	e := &estate{name: name, spare: "spare", note: "note of " + name, remote: "remote-" + name,
		pushToken: "push-token-of-" + name + "-0123456789"}
	e.acct, e.ownerToken = s.Account(name)
	e.agent = &switchboard.Agent{ID: switchboard.NewID(), AccountID: e.acct.ID, Handle: name, Name: "Agent " + name,
		Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	facetest.Must(s.T, s.DB.CreateAgent(ctx, e.agent))
	e.webhook = &switchboard.Agent{ID: switchboard.NewID(), AccountID: e.acct.ID, Handle: name + "-hook", Name: "Hook " + name,
		Mode: switchboard.ModeWebhook, Endpoint: "https://hook.example/" + name, WebhookSecret: switchboard.NewWebhookSecret(),
		Version: "1.0.0", AcceptsTasks: true, Approved: true}
	facetest.Must(s.T, s.DB.CreateAgent(ctx, e.webhook))

	secret, hash := switchboard.NewToken(switchboard.TokenAgent)
	facetest.Must(s.T, s.DB.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: e.agent.ID}, true))
	e.agentToken = secret
	secret, hash = switchboard.NewToken(switchboard.TokenMCP)
	facetest.Must(s.T, s.DB.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AccountID: e.acct.ID, AgentID: e.agent.ID, Label: "claude"}, false))
	e.mcpToken, e.mcpID = secret, switchboard.TokenID(hash)
	secret, hash = switchboard.NewToken(switchboard.TokenMCP)
	facetest.Must(s.T, s.DB.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AccountID: e.acct.ID, Agents: []string{e.agent.ID}, Label: "desk"}, false))
	e.mcpAccountToken = secret
	e.peerToken = s.PeerToken(e.agent, "peer")
	e.siblingToken = s.PeerToken(e.agent, "sibling")
	s.PeerToken(e.agent, e.spare)
	e.revokedToken = s.PeerToken(e.agent, "gone")
	kind, label := switchboard.TokenPeer, "gone"
	_, err := s.DB.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &e.agent.ID, Label: &label})
	facetest.Must(s.T, err)

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(e.note))
	task, _, err := s.Tasks.SendMessage(ctx, e.agent, s.PeerOf(e.peerToken), &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	facetest.Must(s.T, err)
	e.task, e.contextID = task.ID(), task.A2A.ContextID

	o := &switchboard.Outbound{AgentID: e.agent.ID, Target: "bob", Endpoint: "https://bob.example/a2a", Protocol: switchboard.ProtocolV1,
		ContextID: e.contextID, TaskID: a2a.TaskID(e.remote), MessageID: "m-" + name, Text: "hello bob"}
	facetest.Must(s.T, s.Outbox.Record(ctx, o, e.pushToken))
	e.outbound = o.ID
	_, err = s.DB.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: e.agent.ID, Alias: e.spare, URL: "https://spare.example/a/x",
		Token: "sbp_synced-token-of-" + name})
	facetest.Must(s.T, err)

	s.networkEstate(e)
	grant, err := s.Pairing.Authorize(ctx, e.agent, pairing.Request{ClientName: "Barry", Requester: "estate-" + name})
	facetest.Must(s.T, err)
	e.userCode = pairing.FormatUserCode(grant.UserCode)

	now := time.Now().UTC()
	facetest.Must(s.T, s.DB.SaveWakeConfig(ctx, &switchboard.WakeConfig{AgentID: e.agent.ID, URL: s.wakeURL, Preset: wake.PresetGeneric,
		Debounce: time.Minute, CreatedAt: now, UpdatedAt: now}))

	if disabled {
		yes := true
		_, err := s.DB.UpdateAccount(ctx, e.acct.ID, switchboard.AccountUpdate{Disabled: &yes})
		facetest.Must(s.T, err)
	}
	return e
}

// networkEstate puts the estate's agents in its community, with a peer
// token of it that sent a task, and has the connector agent send the
// webhook agent a task.
func (s *authzServer) networkEstate(e *estate) {
	ctx := context.Background()
	e.community = "co-" + e.name
	for _, g := range []*switchboard.Agent{e.agent, e.webhook} {
		_, err := s.DB.JoinCommunity(ctx, g.ID, e.community, true)
		facetest.Must(s.T, err)
	}
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AccountID: e.acct.ID, Community: e.community, Label: "carol"}
	facetest.Must(s.T, s.DB.CreateToken(ctx, tok, false))
	e.communityToken = secret
	carol := switchboard.Peer{ID: tok.PeerID, Label: "carol", Kind: switchboard.PeerCommunity}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello community"))
	task, _, err := s.Tasks.SendMessage(ctx, e.webhook, carol, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	facetest.Must(s.T, err)
	e.communityTask = task.ID()
	msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello hook"))
	task, _, err = s.Tasks.SendMessage(ctx, e.webhook, network.PeerOf(e.agent, e.webhook), &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	facetest.Must(s.T, err)
	e.agentTask = task.ID()
}

// authzReq is one request of the matrix, before its credential.
type authzReq struct {
	method, path, body string
	header             map[string]string
	// ws dials a WebSocket (with the connector subprotocol) instead; the
	// status is the upgrade's.
	ws bool
}

// send makes the request with the Authorization header auth (none if
// empty).
func (s *authzServer) send(q authzReq, auth string) *facetest.Response {
	s.T.Helper()
	if q.ws {
		return s.dialWS(q.path, auth)
	}
	hdr := map[string]string{}
	if q.body != "" {
		hdr["Content-Type"] = "application/json"
	}
	for k, v := range q.header {
		hdr[k] = v
	}
	if auth != "" {
		hdr["Authorization"] = auth
	}
	return s.Do(q.method, s.Server.URL+q.path, hdr, q.body)
}

// dialWS opens a WebSocket and closes it at once: its response is the
// upgrade's status (101 when it was accepted) and, on refusal, the body.
func (s *authzServer) dialWS(path, auth string) *facetest.Response {
	s.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hdr := http.Header{}
	if auth != "" {
		hdr.Set("Authorization", auth)
	}
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.Server.URL, "http")+path,
		&websocket.DialOptions{HTTPHeader: hdr, Subprotocols: []string{connproto.Subprotocol}})
	if ws != nil {
		_ = ws.CloseNow()
	}
	if resp == nil {
		s.T.Fatalf("dial %s: %v", path, err)
	}
	r := &facetest.Response{Status: resp.StatusCode, Header: resp.Header}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil {
		r.Body, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	return r
}
