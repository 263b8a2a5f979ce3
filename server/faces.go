package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/clientaddr"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/oauthhttp"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/reach"
)

// buildFaces makes what answers the world, on the services: the hub of
// connector agents, the HTTP API (addresses, owner API, network API, MCP),
// the console with its device and consent pages. Each names addresses
// through one publicurl.Resolver.
func (s *Server) buildFaces() error {
	cfg, db := s.Config, s.DB
	urls := publicurl.Resolver{PublicURL: strings.TrimRight(cfg.PublicURL, "/"), TrustForwarded: cfg.TrustForwarded, Agents: db,
		Domains: cfg.ACME.Domains}
	s.reach = reach.New(reach.Config{PublicURL: urls.PublicURL, Domains: cfg.ACME.Domains, Resolver: certs.NewResolver(cfg.ACME.DNSResolver),
		Roots: cfg.ReachRoots, Guard: guard(cfg), Port: cfg.ReachPort})
	s.Hub = hub.New(hub.Deps{
		Service: s.Tasks, Agents: db, Tokens: db, Bus: s.Bus, Logger: s.Logger, InstanceID: s.instanceID,
		Limiter: s.limiter, OnAuthenticated: httpapi.MarkAuthenticated, Network: s.Network, Sessions: s.Sessions, Cards: s.published,
		URLs: urls, Tracer: s.Tracer,
	}, hub.Config{HeartbeatInterval: cfg.Heartbeat, AckTimeout: s.Tasks.AckTimeout, MaxSendBytes: int(cfg.MaxBody)})
	var metricsHandler http.Handler // /metrics on the main listener only when asked
	if cfg.Metrics {
		metricsHandler = s.metrics.reg
	}
	s.API = NewAPI(httpapi.Deps{
		Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: s.Tasks, Outbox: s.Outbox, Limiter: s.limiter,
		Tracer: s.Tracer, Logger: s.Logger, Bus: s.Bus, Connect: s.Hub, Presence: s.Tasks, Pinger: db, MetricsHandler: metricsHandler,
		Wakes: s.Wakes, Pushes: s.Pushes, Network: s.Network, Pairing: s.Pairing, MCP: s.newMCP(),
		Fronts: s.Fronts, OAuth: s.OAuth, Published: s.published, OutboundPeers: s.OutboundPeers,
		TLS: s.tlsStatusFunc(), Reach: s.reach, Audit: s.Audit, AuditEntries: db,
	}, httpapi.Config{
		PublicURL: urls.PublicURL, TrustForwarded: cfg.TrustForwarded, MaxBody: cfg.MaxBody,
		DefaultAgent: cfg.DefaultAgent, Version: cfg.Version, BlockingTimeout: cfg.BlockingTimeout,
		PushNotifications: true, BodyTimeout: cfg.BodyTimeout, TrustedProxies: cfg.TrustedProxies,
		DeploymentDomains: urls.Domains, MaxDomainsPerAccount: cfg.MaxDomainsPerAccount,
	})
	var err error
	if s.Console, err = s.newConsole(urls); err != nil {
		return err
	}
	if s.Device, err = dashboard.NewDevicePage(s.Console, s.Pairing, cfg.DefaultAgent); err != nil {
		return err
	}
	if s.OAuth != nil {
		if s.Consent, err = dashboard.NewConsentPage(s.Console, s.OAuth); err != nil {
			return err
		}
	}
	s.metrics.reg.MustRegister(s.API.Metrics()...)
	s.metrics.reg.MustRegister(s.Hub.Metrics()...)
	(&storeGauges{db: db, log: s.Logger}).register(s.metrics.reg)
	return nil
}

// NewAPI returns the HTTP API on deps: the faces of package httpapi with
// the OAuth face (package oauthhttp) mounted beside them. MCP clients'
// OAuth is served only with MCP on. The tests of the faces and of the
// packages that run a whole API (hub, connector, mcpserver) assemble it
// here too.
func NewAPI(deps httpapi.Deps, cfg httpapi.Config) *httpapi.Server {
	api := httpapi.New(deps, cfg)
	var oauth *mcpauth.Service
	if deps.MCP != nil {
		oauth = deps.OAuth
	}
	api.Mount(oauthhttp.New(api.Env, deps.Pairing, oauth).Routes()...)
	return api
}

// newMCP returns the MCP endpoints' handler, or nil when the
// configuration turns MCP off (then no MCP route is served).
func (s *Server) newMCP() httpapi.MCPHandler {
	if s.Config.MCPOff {
		return nil
	}
	db := s.DB
	return mcpserver.New(mcpserver.Deps{
		Accounts: db, Agents: db, Tokens: db, Tasks: s.Tasks, Outbox: s.Outbox, Network: s.Network, Pairing: s.Pairing, Limiter: s.limiter,
		OutboundPeers: s.OutboundPeers,
		Logger:        s.Logger.With("face", "mcp"), OnAuthenticated: httpapi.MarkAuthenticated,
		Audit: s.Audit, ClientAddr: clientaddr.New(s.Config.TrustedProxies).Addr,
	}, mcpserver.Config{Version: s.Config.Version, MaxBody: s.Config.MaxBody, OAuth: true})
}

// newConsole returns the web console on the services the owner API uses.
// Sign-in attempts are counted per client address (newLimiter).
func (s *Server) newConsole(urls publicurl.Resolver) (*dashboard.Console, error) {
	db := s.DB
	return dashboard.New(dashboard.Deps{
		Accounts: db, Agents: db, Tokens: db, SignIns: db, Glances: db, Health: db,
		Tasks: s.Tasks, Peers: peers.New(db, s.Bus, s.Logger), Network: s.Network, Wakes: s.Wakes, Pushes: s.Pushes, Outbox: s.Outbox,
		OutboundPeers: s.OutboundPeers, Published: s.published, Reach: s.reach, Bus: s.Bus, Audit: s.Audit, AuditEntries: db,
		Limiter: s.newLimiter(dashboard.DefaultSignInsPerMinute, time.Minute), Logger: s.Logger,
		BaseURL: urls.Base, OnAuthenticated: httpapi.MarkAuthenticated,
	}, dashboard.Config{TrustedProxies: s.Config.TrustedProxies})
}

// handler serves /dashboard and the paths under it with the console, the
// /device pages of the addresses with the device page and the MCP clients'
// authorization endpoints with the consent page, if MCP is on (they share
// the console's sign-in), everything else with the API; the API bounds the
// reading of the pages' request bodies as of its own. A request to an
// agent domain is the API's first (httpapi.Server.AgentDomains): it is
// served as the agent's address, or sent to the deployment's host to
// sign in, never to the console as it came.
func (s *Server) handler() http.Handler {
	api := s.API
	console, device := api.WatchBodies(s.Console), api.WatchBodies(s.Device)
	var consent http.Handler
	if s.Consent != nil {
		consent = api.WatchBodies(s.Consent)
	}
	return api.AgentDomains(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/dashboard" || strings.HasPrefix(p, "/dashboard/") {
			console.ServeHTTP(w, r)
			return
		}
		if dashboard.IsDevicePath(r.URL.Path) {
			device.ServeHTTP(w, r)
			return
		}
		if consent != nil && dashboard.IsAuthorizePath(r.URL.Path) {
			consent.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}))
}
