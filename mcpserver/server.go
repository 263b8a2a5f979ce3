package mcpserver

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/relay"
)

// ProtocolVersions are the MCP versions served, newest first: 2026-07-28
// (no initialize; the version rides in each request's _meta) and the
// three before it (initialize, then calls).
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// DefaultMaxBody is the largest request body read, in bytes.
const DefaultMaxBody = 1 << 20

// Deps are the services the tools call, the same the owner API calls.
type Deps struct {
	// Accounts are read for account MCP tokens (a disabled account's
	// token opens nothing) and for create_agent.
	Accounts switchboard.AccountStore
	Agents   switchboard.AgentStore
	Tokens   switchboard.TokenStore
	Tasks    *relay.Service
	// Outbox records what the agent sends; nil: history, send and
	// poll_outbound answer that it is not available.
	Outbox *outbox.Service
	// Network is the coordinator network; nil: directory, send and
	// send_to_community answer that it is not available.
	Network *network.Service
	// OutboundPeers holds the agents' synced aliases, which send reaches
	// and poll_outbound reads at the remote agent; nil: send reaches this
	// deployment only.
	OutboundPeers *outpeer.Service
	// Pairing lists the agent's pending pairing requests; nil:
	// pairing_requests lists none.
	Pairing *pairing.Service
	// Limiter counts calls per MCP token (60 a minute in a default
	// deployment, shared across instances on PostgreSQL).
	Limiter switchboard.RateLimiter
	Logger  *slog.Logger
	// OnAuthenticated, if set, is called with each request whose token
	// was accepted (httpapi.MarkAuthenticated).
	OnAuthenticated func(*http.Request)
	// Audit records the agents create_agent makes; nil: nothing is
	// recorded.
	Audit switchboard.AuditLog
	// ClientAddr returns the address a request came from, for the audit
	// log (clientaddr.Resolver.Addr); nil: the connection's peer.
	ClientAddr func(*http.Request) string
}

// Config holds the settings of the MCP endpoint. Zero values mean
// defaults.
type Config struct {
	// Version is the build version shown as the server's version.
	Version string
	// MaxBody is the largest request body read (default DefaultMaxBody);
	// a larger one is answered 413.
	MaxBody int64
	// Now is the clock of last-use times (default time.Now).
	Now func() time.Time
	// OAuth says MCP clients may get tokens by OAuth (package mcpauth):
	// a 401 then names the endpoint's protected resource metadata
	// (RFC 9728) in its WWW-Authenticate challenge.
	OAuth bool
}

// Server serves the MCP endpoints of every agent.
type Server struct {
	Deps
	cfg     Config
	sdk     *mcp.Server  // immutable after New: one server, every agent's tools
	handler http.Handler // immutable after New: token → limit → version → SDK
	// acct and acctHandler are the same for the account endpoint: the
	// tools with an agent argument, and create_agent.
	acct        *mcp.Server
	acctHandler http.Handler

	usage *peers.Usage // records MCP tokens' last use
}

// New returns a Server.
func New(deps Deps, cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{Deps: deps, cfg: cfg, usage: peers.NewUsage(deps.Tokens, deps.Logger, cfg.Now)}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: "switchboard", Title: "Switchboard", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions, SupportedProtocolVersions: ProtocolVersions, Logger: deps.Logger})
	s.acct = mcp.NewServer(&mcp.Implementation{Name: "switchboard", Title: "Switchboard (account)", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: accountInstructions, SupportedProtocolVersions: ProtocolVersions, Logger: deps.Logger})
	s.addTools()
	s.handler = s.wrap(s.sdk)
	s.acctHandler = s.wrap(s.acct)
	return s
}

// wrap returns the handler of an SDK server: the SDK's token check (made
// already by ServeAgent or ServeAccount), the rate limit, the version
// check, the rate limit of a batch's other messages (batch.go), then the
// SDK's stateless Streamable HTTP handler.
func (s *Server) wrap(srv *mcp.Server) http.Handler {
	sdkHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: s.Logger, MaxRequestBodyBytes: s.cfg.MaxBody,
		// Switchboard often listens on loopback behind a proxy that keeps
		// the public Host: the Origin check (guard.go) is against the
		// public URL instead.
		DisableLocalhostProtection: true,
	})
	bearer := auth.RequireBearerToken(passOn, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := s.limit(w, r)
		if !ok || !checkVersion(w, r) {
			return
		}
		over, ok := s.limitBatch(w, r, key)
		if !ok {
			return
		}
		// A client that stops reading its answer gives up the call's
		// goroutine by then, rather than hold it in a write for ever.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(maxCallTime))
		if over != nil {
			serveOverLimit(w, r, sdkHandler, over)
			return
		}
		sdkHandler.ServeHTTP(w, r)
	}))
}

// maxCallTime bounds the writing of a call's answer, from the call's
// start: longer than any tool takes (a send to a synced alias waits at
// most 90 s for the remote agent's answer to begin).
const maxCallTime = 5 * time.Minute

// accountInstructions are the account endpoint's instructions.
const accountInstructions = `Switchboard: the inboxes and outboxes of the agents this token acts for; every tool names its agent (handle). ` +
	`Read tasks with inbox and show_task, answer with reply, send work with send or send_to_community; create_agent makes one new agent. ` + untrusted

// instructions are the server's instructions to the model.
const instructions = `Switchboard: the inbox and the outbox of one agent's public A2A address. ` +
	`Read tasks with inbox and show_task, answer with reply, send work with send or send_to_community. ` + untrusted
