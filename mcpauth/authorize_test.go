package mcpauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

const resource = "https://sb.example/a/helper/mcp"

// newService returns a Service on a fresh SQLite store with one agent
// and one client registered with a loopback and an https redirect URI.
func newService(t *testing.T) (*mcpauth.Service, *switchboard.Agent, *switchboard.OAuthClient) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "helper", Mode: switchboard.ModeInbox, Version: "1"}
	must(t, db.CreateAgent(ctx, g))
	svc := mcpauth.New(mcpauth.Deps{Store: db, Tokens: db}, mcpauth.Config{})
	c, err := svc.Register(ctx, []byte(`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback","https://app.example/cb"]}`), "192.0.2.1")
	must(t, err)
	return svc, g, c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// challengeOf is the S256 challenge of a verifier.
func challengeOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func request(c *switchboard.OAuthClient, set ...string) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {"http://127.0.0.1:6000/callback"},
		"state": {"s"}, "code_challenge": {challengeOf(strings.Repeat("v", 43))}, "code_challenge_method": {"S256"},
		"resource": {resource}, "scope": {"inbox offline_access"}}
	for i := 0; i+1 < len(set); i += 2 {
		q.Set(set[i], set[i+1])
	}
	return q
}

// TestCheckRequest: an unknown client or a redirect URI not registered is
// refused on the page; a loopback redirect matches on any port; other
// faults go back to the client with their error code.
func TestCheckRequest(t *testing.T) {
	svc, _, c := newService(t)
	ctx := context.Background()
	if _, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1"); err != nil {
		t.Fatalf("a loopback redirect on another port: %v", err)
	}
	for _, set := range [][]string{{"client_id", "nope"}, {"redirect_uri", "https://evil.example/cb"},
		{"redirect_uri", "http://127.0.0.1:6000/other"}, {"redirect_uri", "https://app.example:8443/cb"}} {
		var pe *mcpauth.PageError
		if _, err := svc.CheckRequest(ctx, request(c, set...), resource, "192.0.2.1"); !errors.As(err, &pe) {
			t.Errorf("%v: %v, want a page error", set, err)
		}
	}
	for _, tc := range []struct {
		set  []string
		code string
	}{
		{[]string{"response_type", "token"}, "unsupported_response_type"},
		{[]string{"code_challenge_method", "plain"}, "invalid_request"},
		{[]string{"code_challenge", "short"}, "invalid_request"},
		{[]string{"resource", "https://sb.example/a/other/mcp"}, "invalid_target"},
		{[]string{"scope", "inbox admin"}, "invalid_scope"},
	} {
		var re *mcpauth.RedirectError
		_, err := svc.CheckRequest(ctx, request(c, tc.set...), resource, "192.0.2.1")
		if !errors.As(err, &re) || re.Code != tc.code || !strings.HasPrefix(re.URL("https://sb.example/a/helper"), "http://127.0.0.1:6000/callback?") {
			t.Errorf("%v: %v, want a redirect with %s", tc.set, err, tc.code)
		}
	}
}

// TestExchange: a code opens only its endpoint and works once; a wrong
// verifier burns it; labels are de-duplicated.
func TestExchange(t *testing.T) {
	svc, g, c := newService(t)
	ctx := context.Background()
	ep := mcpauth.Endpoint{AgentID: g.ID, Resource: resource}
	tg := switchboard.OAuthTarget{AccountID: g.AccountID, AgentID: g.ID}
	verifier := strings.Repeat("v", 43)
	codeOf := func() string {
		req, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1")
		must(t, err)
		to, err := svc.Approve(ctx, req, tg, "https://sb.example/a/helper")
		must(t, err)
		u, err := url.Parse(to)
		must(t, err)
		if u.Query().Get("iss") != "https://sb.example/a/helper" || u.Query().Get("state") != "s" {
			t.Fatalf("approve sends back to %s", to)
		}
		return u.Query().Get("code")
	}
	form := func(code, v string) url.Values {
		return url.Values{"code": {code}, "client_id": {c.ID}, "code_verifier": {v}, "redirect_uri": {"http://127.0.0.1:6000/callback"}}
	}

	code := codeOf()
	if _, err := svc.Exchange(ctx, form(code, verifier), mcpauth.Endpoint{Resource: "https://sb.example/mcp"}); err == nil {
		t.Fatal("a code for an agent's endpoint was redeemed at the account endpoint")
	}
	if _, err := svc.Exchange(ctx, form(code, verifier), ep); err == nil {
		t.Fatal("a code was redeemed after a failed attempt")
	}
	code = codeOf()
	if _, err := svc.Exchange(ctx, form(code, strings.Repeat("w", 43)), ep); err == nil {
		t.Fatal("a wrong verifier was accepted")
	}
	if _, err := svc.Exchange(ctx, form(code, verifier), ep); err == nil {
		t.Fatal("a code burnt by a wrong verifier was redeemed")
	}
	first, err := svc.Exchange(ctx, form(codeOf(), verifier), ep)
	must(t, err)
	second, err := svc.Exchange(ctx, form(codeOf(), verifier), ep)
	must(t, err)
	if first.Label != "mcp-claude-code" || second.Label != "mcp-claude-code-2" {
		t.Fatalf("labels %q, %q", first.Label, second.Label)
	}
}

// grantOnAClock makes a store and a service on a clock the test moves
// (*now), and a grant of an agent's endpoint to a registered client: its
// service, store, endpoint and first token pair.
func grantOnAClock(t *testing.T) (*mcpauth.Service, *sqlstore.DB, mcpauth.Endpoint, *mcpauth.TokenPair, *time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now()
	clock := func() time.Time { return now }
	db.Now = clock
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "helper", Mode: switchboard.ModeInbox, Version: "1"}
	must(t, db.CreateAgent(ctx, g))
	svc := mcpauth.New(mcpauth.Deps{Store: db, Tokens: db}, mcpauth.Config{Now: clock})
	c, err := svc.Register(ctx, []byte(`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"]}`), "192.0.2.1")
	must(t, err)
	req, err := svc.CheckRequest(ctx, request(c), resource, "192.0.2.1")
	must(t, err)
	to, err := svc.Approve(ctx, req, switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID}, "https://sb.example/a/helper")
	must(t, err)
	u, err := url.Parse(to)
	must(t, err)
	ep := mcpauth.Endpoint{AgentID: g.ID, Resource: resource}
	pair, err := svc.Exchange(ctx, url.Values{"code": {u.Query().Get("code")}, "client_id": {c.ID},
		"code_verifier": {strings.Repeat("v", 43)}}, ep)
	must(t, err)
	return svc, db, ep, pair, &now
}

// TestRefreshAfterExpiry: an access token stops working an hour after it
// was issued; its refresh token still renews it, and the new one works,
// for an hour.
func TestRefreshAfterExpiry(t *testing.T) {
	ctx := context.Background()
	svc, db, ep, pair, now := grantOnAClock(t)
	if pair.ExpiresIn != mcpauth.AccessTTL {
		t.Fatalf("expires in %v", pair.ExpiresIn)
	}
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(pair.AccessToken)); err != nil {
		t.Fatalf("a fresh access token: %v", err)
	}
	*now = now.Add(mcpauth.AccessTTL + time.Second)
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(pair.AccessToken)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("an expired access token: %v, want ENOTFOUND", err)
	}
	next, err := svc.Refresh(ctx, url.Values{"refresh_token": {pair.RefreshToken}}, ep)
	must(t, err)
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(next.AccessToken)); err != nil {
		t.Fatalf("the refreshed access token: %v", err)
	}
	*now = now.Add(mcpauth.AccessTTL)
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(next.AccessToken)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the refreshed access token an hour on: %v, want ENOTFOUND", err)
	}
}

// TestRefreshTokenUsedTwice: a refresh token presented again right after
// it was rotated (a client's second refresh at the same time) is refused
// and the grant goes on; presented again later, it ends its grant (two
// holders of it, one a thief): the refresh token and MCP token issued in
// its place stop working too.
func TestRefreshTokenUsedTwice(t *testing.T) {
	ctx := context.Background()
	svc, db, ep, pair, now := grantOnAClock(t)
	refresh := func(token string) (*mcpauth.TokenPair, error) {
		return svc.Refresh(ctx, url.Values{"refresh_token": {token}}, ep)
	}

	next, err := refresh(pair.RefreshToken)
	must(t, err)
	*now = now.Add(mcpauth.ReuseGrace / 2)
	if _, err := refresh(pair.RefreshToken); err == nil {
		t.Fatal("a rotated refresh token was taken again")
	}
	next, err = refresh(next.RefreshToken) // the grant goes on
	must(t, err)

	*now = now.Add(mcpauth.ReuseGrace + time.Second)
	if _, err := refresh(pair.RefreshToken); err == nil { // two rotations ago: unknown
		t.Fatal("a refresh token rotated twice was taken")
	}
	third, err := refresh(next.RefreshToken)
	must(t, err)
	*now = now.Add(mcpauth.ReuseGrace + time.Second)
	if _, err := refresh(next.RefreshToken); err == nil {
		t.Fatal("a rotated refresh token was taken again")
	}
	if _, err := refresh(third.RefreshToken); err == nil {
		t.Fatal("the refresh token issued in its place still works")
	}
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(third.AccessToken)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the MCP token issued in its place: %v, want revoked", err)
	}
}

// TestCheckRequestDefaultRedirect: a request without redirect_uri goes
// back to its client's one redirect URI; a client with several must name
// one.
func TestCheckRequestDefaultRedirect(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil) // w.client has one redirect URI
	ctx := context.Background()
	q := request(w.client)
	q.Del("redirect_uri")
	req, err := w.svc.CheckRequest(ctx, q, resource, "192.0.2.1")
	if err != nil || req.RedirectURI != "http://127.0.0.1/callback" {
		t.Fatalf("a one-URI client without redirect_uri: %+v, %v", req, err)
	}
	svc, _, two := newService(t)
	q = request(two)
	q.Del("redirect_uri")
	var pe *mcpauth.PageError
	if _, err := svc.CheckRequest(ctx, q, resource, "192.0.2.1"); !errors.As(err, &pe) {
		t.Fatalf("a two-URI client without redirect_uri: %v, want a page error", err)
	}
}
