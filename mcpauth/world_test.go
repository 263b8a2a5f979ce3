package mcpauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// accountResource is the account endpoint's MCP URL in these tests.
const accountResource = "https://sb.example/mcp"

// world is a Service on a SQLite store and a clock the test moves (*now),
// with an account, its agent "helper" and a client registered with one
// loopback redirect URI.
type world struct {
	t      *testing.T
	svc    *mcpauth.Service
	db     *sqlstore.DB
	now    *time.Time
	acct   *switchboard.Account
	agent  *switchboard.Agent
	client *switchboard.OAuthClient
	ep     mcpauth.Endpoint
}

// newWorld makes a world; store, if not nil, wraps the store the Service
// uses.
func newWorld(t *testing.T, cfg mcpauth.Config, store func(*sqlstore.DB) switchboard.OAuthStore) *world {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now()
	clock := func() time.Time { return now }
	db.Now = clock
	cfg.Now = clock
	w := &world{t: t, db: db, now: &now}
	w.acct = &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, w.acct))
	w.agent = w.newAgent(w.acct, "helper")
	var os switchboard.OAuthStore = db
	if store != nil {
		os = store(db)
	}
	w.svc = mcpauth.New(mcpauth.Deps{Store: os, Tokens: db}, cfg)
	w.client = w.register("Claude Code", "192.0.2.1")
	w.ep = mcpauth.Endpoint{AgentID: w.agent.ID, Resource: resource}
	return w
}

// newAgent creates an agent of the account.
func (w *world) newAgent(acct *switchboard.Account, handle string) *switchboard.Agent {
	w.t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Mode: switchboard.ModeInbox, Version: "1"}
	must(w.t, w.db.CreateAgent(context.Background(), g))
	return g
}

// register registers a client from the address.
func (w *world) register(name, from string) *switchboard.OAuthClient {
	w.t.Helper()
	c, err := w.svc.Register(context.Background(), []byte(`{"client_name":"`+name+`","redirect_uris":["http://127.0.0.1/callback"]}`), from)
	must(w.t, err)
	return c
}

// codeFor is the code of the owner's consent to the client's request for
// the target, at the endpoint of resource res.
func (w *world) codeFor(c *switchboard.OAuthClient, res string, tg switchboard.OAuthTarget) string {
	w.t.Helper()
	ctx := context.Background()
	req, err := w.svc.CheckRequest(ctx, request(c, "resource", res), res, "192.0.2.1")
	must(w.t, err)
	to, err := w.svc.Approve(ctx, req, tg, "https://sb.example/a/helper")
	must(w.t, err)
	u, err := url.Parse(to)
	must(w.t, err)
	return u.Query().Get("code")
}

// code is the code of a consent to w.client for the agent's endpoint.
func (w *world) code() string {
	return w.codeFor(w.client, resource, switchboard.OAuthTarget{AccountID: w.acct.ID, AgentID: w.agent.ID})
}

// redeemForm is the token request of a code by w.client, with the pairs
// of set changed.
func (w *world) redeemForm(code string, set ...string) url.Values {
	f := url.Values{"code": {code}, "client_id": {w.client.ID}, "code_verifier": {strings.Repeat("v", 43)},
		"redirect_uri": {"http://127.0.0.1:6000/callback"}}
	for i := 0; i+1 < len(set); i += 2 {
		f.Set(set[i], set[i+1])
	}
	return f
}

// grant redeems a fresh code at the agent's endpoint.
func (w *world) grant() *mcpauth.TokenPair {
	w.t.Helper()
	pair, err := w.svc.Exchange(context.Background(), w.redeemForm(w.code()), w.ep)
	must(w.t, err)
	return pair
}

// refresh sends a refresh request at the endpoint, with the pairs of set
// added.
func (w *world) refresh(ep mcpauth.Endpoint, token string, set ...string) (*mcpauth.TokenPair, error) {
	f := url.Values{"refresh_token": {token}}
	for i := 0; i+1 < len(set); i += 2 {
		f.Set(set[i], set[i+1])
	}
	return w.svc.Refresh(context.Background(), f, ep)
}

// active reports whether the MCP token opens its endpoint now.
func (w *world) active(token string) bool {
	_, err := w.db.FindTokenByHash(context.Background(), switchboard.HashToken(token))
	return err == nil
}

// wantOAuth fails unless err is the OAuth error code.
func wantOAuth(t *testing.T, err error, code string) {
	t.Helper()
	var oe *pairing.Error
	if !errors.As(err, &oe) || oe.Code != code {
		t.Fatalf("%v, want the OAuth error %s", err, code)
	}
}
