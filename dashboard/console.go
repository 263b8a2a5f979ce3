package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/accounts"
	"github.com/switchboard-dev/switchboard/clientaddr"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/reach"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/wake"
)

// DefaultIdleTimeout is how long a sign-in lasts unused.
const DefaultIdleTimeout = 12 * time.Hour

// DefaultLifetime is how long a sign-in lasts at most, however often it
// is used: the owner then signs in again.
const DefaultLifetime = 7 * 24 * time.Hour

// DefaultSignInsPerMinute bounds the sign-in attempts of one client
// address per minute (the limiter cmd builds for the console).
const DefaultSignInsPerMinute = 10

// Deps are what the console uses: the stores through their interfaces and
// the services the owner API uses.
type Deps struct {
	// Accounts, Agents and Tokens find the signed-in account, its owner
	// token and the agents it manages.
	Accounts switchboard.AccountStore
	Agents   switchboard.AgentStore
	Tokens   switchboard.TokenStore
	// SignIns keeps the sign-ins; Glances reads the agents list; Health
	// counts the deployment's connections and queues for the operator.
	SignIns switchboard.SignInStore
	Glances switchboard.AgentGlanceStore
	Health  HealthStore
	// Tasks changes agents' settings (relay.Service.UpdateAgent), reads
	// inboxes, tasks and sessions, and records replies.
	Tasks *relay.Service
	// Peers issues and revokes peer tokens.
	Peers *peers.Service
	// Network names the agents' communities, joins and leaves them, and
	// says whether agents need approval (nil: communities are off).
	Network *network.Service
	// Wakes shows and changes agents' wake webhooks and sends test wakes
	// (nil: wakes are not served, the wake page answers 404).
	Wakes *wake.Service
	// Pushes shows a task's push notifications and their attempts (nil:
	// not kept).
	Pushes *push.Service
	// Outbox lists what agents sent other agents (nil: not served).
	Outbox *outbox.Service
	// OutboundPeers lists and removes agents' synced aliases, as GET and
	// DELETE /agents/{ref}/peers do (nil: the server keeps none; the
	// agent's page has no such section).
	OutboundPeers *outpeer.Service
	// Published reads the cards forwarding connectors publish for their
	// agents, as GET /agents/{ref} shows them (nil: none shown).
	Published *front.Published
	// Reach checks how the world reaches the deployment's names and the
	// agents' domains, for the health page (nil: not shown).
	Reach *reach.Checker
	// Bus brings the hints the live updates follow.
	Bus switchboard.Bus
	// Audit records the security-relevant changes made in the console
	// (sign-ins too); nil: nothing is recorded.
	Audit switchboard.AuditLog
	// AuditEntries is the audit log the console's audit page lists; nil:
	// no such page.
	AuditEntries switchboard.AuditStore
	// Limiter counts sign-in attempts per client address.
	Limiter switchboard.RateLimiter
	// Logger logs failures (never a token).
	Logger *slog.Logger
	// BaseURL returns the URL the world reaches the server at, for a
	// request: the console's origin, and the base of agents' addresses.
	BaseURL func(r *http.Request) string
	// OnAuthenticated is called for each request of a signed-in owner
	// (httpapi.MarkAuthenticated: the connection is no longer counted as
	// unauthenticated).
	OnAuthenticated func(r *http.Request)
}

// Config holds the console's settings; zero values mean the defaults.
type Config struct {
	// IdleTimeout ends a sign-in unused this long (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// Lifetime ends a sign-in this long after it began, used or not
	// (DefaultLifetime). The store refuses an older one; the cookie's
	// Max-Age says the same to the browser.
	Lifetime time.Duration
	// Coalesce is the least time between two live updates of one page
	// (250 ms).
	Coalesce time.Duration
	// Poll is how often an open page is updated without a hint, for
	// sessions that expired without one (10 s).
	Poll time.Duration
	// Now returns the time (time.Now).
	Now func() time.Time
	// TrustedProxies are the ranges of the proxies in front of the server:
	// a request from one of them counts as the client its X-Forwarded-For
	// names in the per-address limits (package clientaddr). None: the
	// connection's peer.
	TrustedProxies []netip.Prefix
}

// Console is the web console's handler.
type Console struct {
	Deps
	cfg   Config
	pages *pages
	mux   *http.ServeMux
	// owners changes accounts, owner and agent tokens and deletes agents:
	// the service the owner API calls, built the same way.
	owners *accounts.Service
	// clients finds the address a request came from; immutable after New.
	clients *clientaddr.Resolver

	// streams ends every open event stream when closed (CloseStreams).
	streams    context.Context
	endStreams context.CancelFunc
}

// New returns the console's handler, which serves /dashboard and the
// paths under it.
func New(deps Deps, cfg Config) (*Console, error) {
	if deps.Accounts == nil || deps.Agents == nil || deps.Tokens == nil || deps.SignIns == nil ||
		deps.Glances == nil || deps.Health == nil || deps.Tasks == nil || deps.Peers == nil || deps.Bus == nil || deps.Limiter == nil || deps.BaseURL == nil {
		return nil, errors.New("dashboard: missing dependency")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Coalesce <= 0 {
		cfg.Coalesce = 250 * time.Millisecond
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	c := &Console{Deps: deps, cfg: cfg, pages: p, mux: http.NewServeMux(),
		owners:  accounts.New(deps.Accounts, deps.Agents, deps.Tokens, deps.Bus, deps.Logger),
		clients: clientaddr.New(cfg.TrustedProxies)}
	c.streams, c.endStreams = context.WithCancel(context.Background())
	c.routes()
	return c, nil
}

// routes registers every path of the console.
func (c *Console) routes() {
	c.mux.HandleFunc("GET /dashboard", c.handleHome)
	c.mux.HandleFunc("GET /dashboard/{$}", c.handleHome)
	c.mux.HandleFunc("POST /dashboard/login", c.handleLogin)
	c.mux.HandleFunc("POST /dashboard/logout", c.signedIn(c.handleLogout))
	c.mux.HandleFunc("GET /dashboard/events", c.signedIn(c.handleEvents))
	c.mux.HandleFunc("POST /dashboard/accepts-tasks", c.signedIn(c.handleAcceptsTasks))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}", c.signedIn(c.handleAgent))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/tokens", c.signedIn(c.handleIssueToken))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/tokens/revoke", c.signedIn(c.handleRevokeToken))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/communities/join", c.signedIn(c.handleJoin))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/communities/leave", c.signedIn(c.handleLeave))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/aliases/remove", c.signedIn(c.handleRemoveAlias))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/agent-token", c.signedIn(c.handleRotateAgentToken))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}/delete", c.signedIn(c.handleConfirmDelete))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/delete", c.signedIn(c.handleDelete))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}/wake", c.signedIn(c.handleWake))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/wake", c.signedIn(c.handleSetWake))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/wake/clear", c.signedIn(c.handleClearWake))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/wake/test", c.signedIn(c.handleTestWake))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}/inbox", c.signedIn(c.handleInbox))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}/history", c.signedIn(c.handleHistory))
	c.mux.HandleFunc("GET /dashboard/agents/{handle}/outbox", c.signedIn(c.handleOutbox))
	c.mux.HandleFunc("GET /dashboard/tasks/{id}", c.signedIn(c.handleTask))
	c.mux.HandleFunc("GET /dashboard/accounts", c.signedIn(c.operatorOnly(c.handleAccounts)))
	c.mux.HandleFunc("POST /dashboard/accounts", c.signedIn(c.operatorOnly(c.handleCreateAccount)))
	c.mux.HandleFunc("POST /dashboard/accounts/{id}/disable", c.signedIn(c.operatorOnly(c.handleDisableAccount)))
	c.mux.HandleFunc("POST /dashboard/accounts/{id}/enable", c.signedIn(c.operatorOnly(c.handleEnableAccount)))
	c.mux.HandleFunc("POST /dashboard/accounts/{id}/rotate", c.signedIn(c.operatorOnly(c.handleRotateAccountToken)))
	c.mux.HandleFunc("GET /dashboard/audit", c.signedIn(c.handleAudit))
	c.mux.HandleFunc("GET /dashboard/health", c.signedIn(c.handleHealth))
	c.mux.HandleFunc("GET /dashboard/approvals", c.signedIn(c.operatorOnly(c.handleApprovals)))
	c.mux.HandleFunc("POST /dashboard/agents/{handle}/approve", c.signedIn(c.operatorOnly(c.handleApprove)))
	c.mux.HandleFunc("POST /dashboard/tasks/{id}/reply", c.signedIn(c.handleReply))
	c.mux.Handle("GET /dashboard/static/", c.staticHandler())
	c.mux.HandleFunc("/dashboard/", c.handleNotFound)
}

// ServeHTTP serves the console's pages, each with the security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	c.mux.ServeHTTP(w, r)
}

// CloseStreams ends the open event streams (at shutdown, so that the
// HTTP server does not wait for them) and refuses new ones.
func (c *Console) CloseStreams() {
	c.endStreams()
}

func (c *Console) handleNotFound(w http.ResponseWriter, r *http.Request) {
	c.renderError(w, r, http.StatusNotFound, "There is no such page.")
}
