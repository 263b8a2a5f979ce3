package main

import (
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// newConsole builds the web console on the services the owner API uses.
// Sign-in attempts are counted per client address, in the store on
// PostgreSQL (every instance sees one count), in memory on SQLite.
// published is the API's reader of forwarding connectors' cards, so that
// both faces show the same.
func (m *Main) newConsole(cfg Config, db *sqlstore.DB, published *front.Published) (*dashboard.Console, error) {
	var limiter switchboard.RateLimiter = ratelimit.NewMemory(dashboard.DefaultSignInsPerMinute, time.Minute)
	if isPostgres(cfg.Database) {
		shared := ratelimit.NewShared(db, dashboard.DefaultSignInsPerMinute, time.Minute)
		shared.Log = m.Logger
		limiter = shared
	}
	return dashboard.New(dashboard.Deps{
		Accounts: db, Agents: db, Tokens: db, SignIns: db, Glances: db, Health: db,
		Tasks: m.Tasks, Peers: peers.New(db, m.Bus, m.Logger), Network: m.Network, Wakes: m.Wakes, Pushes: m.Pushes, Outbox: m.Outbox,
		OutboundPeers: m.OutboundPeers, Published: published, Bus: m.Bus, Limiter: limiter, Logger: m.Logger,
		BaseURL: m.API.BaseURL, OnAuthenticated: httpapi.MarkAuthenticated,
	}, dashboard.Config{TrustedProxies: cfg.TrustedProxies})
}

// withConsole serves /dashboard and the paths under it with the console,
// the /device pages of the addresses with device and the MCP clients'
// authorization endpoints with consent, if not nil (they share the
// console's sign-in), everything else with the API; the API bounds the
// reading of the pages' request bodies as of its own.
func withConsole(api *httpapi.Server, console, device http.Handler, consent *dashboard.ConsentPage) http.Handler {
	console, device = api.WatchBodies(console), api.WatchBodies(device)
	var consentPage http.Handler
	if consent != nil {
		consentPage = api.WatchBodies(consent)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/dashboard" || strings.HasPrefix(p, "/dashboard/") {
			console.ServeHTTP(w, r)
			return
		}
		if dashboard.IsDevicePath(r.URL.Path) {
			device.ServeHTTP(w, r)
			return
		}
		if consentPage != nil && dashboard.IsAuthorizePath(r.URL.Path) {
			consentPage.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
