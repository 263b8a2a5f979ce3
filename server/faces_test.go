package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/server"
)

// TestAPIWithoutOptionalServices: an API assembled with the stores and the
// relay only (no bus, limiter, network, pairing, fronts, published cards,
// presence, reachability, MCP or OAuth) answers as a server without each:
// front agents refused, no communities and agents approved at creation,
// no pairing on cards, 401s or landing pages and its routes 404, no
// pending pairings, no reachability, no connection in views, agent tokens
// open no address, and a peer's call served without a limit.
func TestAPIWithoutOptionalServices(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	log := slog.New(slog.DiscardHandler)
	api := server.NewAPI(server.APIDeps{Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: relay.New(db, bus, log),
		Logger: log}, httpapi.Config{})
	api.SetReady(true)
	srv := httptest.NewServer(api.AgentDomains(api))
	t.Cleanup(func() {
		api.CloseStreams()
		srv.Close()
	})
	op := &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	must(t, db.CreateAccount(ctx, op))
	owner, hash := switchboard.NewToken(switchboard.TokenOwner)
	must(t, db.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: op.ID}, true))
	for handle, mode := range map[string]switchboard.DeliveryMode{"fr": switchboard.ModeFront, "conn": switchboard.ModeConnector} {
		// Agents in these modes, as a server with fronts and connectors made them.
		must(t, db.CreateAgent(ctx, &switchboard.Agent{ID: switchboard.NewID(), AccountID: op.ID, Handle: handle, Name: handle,
			Mode: mode, Version: "1", AcceptsTasks: true, Approved: true}))
	}

	do := func(method, path, token, contentType, body string) (int, http.Header, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		must(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		if out == nil {
			out = map[string]any{"raw": string(raw)}
		}
		return resp.StatusCode, resp.Header, out
	}
	want := func(what string, status, wantStatus int, out map[string]any, wantError string) {
		t.Helper()
		if status != wantStatus || (wantError != "" && out["error"] != wantError) {
			t.Errorf("%s: %d %v, want %d %q", what, status, out, wantStatus, wantError)
		}
	}

	// Fronts: none can be made, whatever else the request lacks; an agent
	// left in front mode is none, and its view names no upstream.
	for _, body := range []string{`{"handle":"f1","mode":"front","upstream":"https://up.example/a2a"}`, `{"handle":"f2","mode":"front"}`} {
		status, _, out := do("POST", "/agents", owner, "application/json", body)
		want("create "+body, status, http.StatusBadRequest, out, "this server does not run fronts")
	}
	status, _, out := do("GET", "/agents/fr/front", owner, "", "")
	want("front status", status, http.StatusBadRequest, out, "agent fr is not in front mode")
	status, _, out = do("PUT", "/agents/fr/upstream-credentials", owner, "application/json", `{"bearer":"x"}`)
	want("front credentials", status, http.StatusBadRequest, out, "agent fr is not in front mode")
	if status, _, out = do("GET", "/agents/fr", owner, "", ""); status != http.StatusOK || out["upstream"] != nil {
		t.Errorf("front agent's view: %d %v, want no upstream", status, out)
	}

	// The network: an agent starts approved, in no community; no
	// community address, and an agent token opens no address.
	status, _, out = do("POST", "/agents", owner, "application/json", `{"handle":"alice","mode":"inbox"}`)
	if comms, _ := out["communities"].([]any); status != http.StatusCreated || out["approved"] != true || comms == nil || len(comms) != 0 {
		t.Fatalf("create alice: %d %v, want approved, in no community", status, out)
	}
	status, _, out = do("POST", "/agents", owner, "application/json", `{"handle":"bob","mode":"inbox"}`)
	if status != http.StatusCreated {
		t.Fatalf("create bob: %d %v", status, out)
	}
	status, _, out = do("POST", "/agents/bob/agent-token", owner, "", "")
	bobToken, _ := out["agent_token"].(string)
	if status != http.StatusOK || bobToken == "" {
		t.Fatalf("bob's agent token: %d %v", status, out)
	}
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	status, _, out = do("POST", "/a/alice", bobToken, "application/json", send)
	want("an agent token at an address", status, http.StatusUnauthorized, out, "")
	status, _, out = do("GET", "/c/everyone", "", "", "")
	want("a community address", status, http.StatusNotFound, out, "not found")

	// Pairing: alice would take pairing requests (human), but the server
	// runs no pairing: her card, 401s and landing page name none, its
	// routes are not served, and no request waits.
	status, _, out = do("GET", "/a/alice/.well-known/agent-card.json", "", "", "")
	if raw, _ := json.Marshal(out); status != http.StatusOK || strings.Contains(string(raw), "oauth") || strings.Contains(string(raw), "pairing") {
		t.Errorf("alice's card: %d %s, want no pairing", status, raw)
	}
	status, header, out := do("POST", "/a/alice", "", "application/json", send)
	if raw, _ := json.Marshal(out); status != http.StatusUnauthorized || strings.Contains(header.Get("WWW-Authenticate"), "resource_metadata") ||
		strings.Contains(string(raw), "pair") {
		t.Errorf("a call without a token: %d %q %s, want 401 without pairing", status, header.Get("WWW-Authenticate"), raw)
	}
	status, _, out = do("GET", "/a/alice?format=json", "", "", "")
	if status != http.StatusOK || out["pairing"] != nil {
		t.Errorf("alice's landing page: %d %v, want no pairing", status, out)
	}
	form := "application/x-www-form-urlencoded"
	for _, path := range []string{"/a/alice/oauth/device_authorization", "/oauth/device_authorization"} {
		status, _, out = do("POST", path, "", form, url.Values{"client_name": {"x"}}.Encode())
		want(path, status, http.StatusNotFound, out, "not found")
	}
	for _, grant := range []string{httpapi.DeviceGrantType, "refresh_token", "authorization_code", "password"} {
		status, _, out = do("POST", "/a/alice/oauth/token", "", form, url.Values{"grant_type": {grant}, "device_code": {"x"}}.Encode())
		want("token, "+grant, status, http.StatusNotFound, out, "not found")
	}
	for _, path := range []string{"/a/alice/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/a/alice"} {
		status, _, out = do("GET", path, "", "", "")
		want(path, status, http.StatusNotFound, out, "not found")
	}
	status, _, out = do("GET", "/a/alice/.well-known/oauth-authorization-server", "", "", "")
	want("authorization server metadata", status, http.StatusNotFound, out, "no authorization server at this address")
	if status, _, out = do("GET", "/agents/alice/pairings", owner, "", ""); status != http.StatusOK || out["raw"] != "[]\n" {
		t.Errorf("alice's pairings: %d %v, want []", status, out)
	}

	// Reachability: none checked. Presence and published cards: a
	// connector agent's view says nothing of either.
	status, _, out = do("GET", "/agents/alice/reachability", owner, "", "")
	if addrs, _ := out["addresses"].([]any); status != http.StatusOK || addrs == nil || len(addrs) != 0 {
		t.Errorf("alice's reachability: %d %v, want no address", status, out)
	}
	if status, _, out = do("GET", "/agents/conn", owner, "", ""); status != http.StatusOK || out["connected"] != nil || out["published_card"] != nil {
		t.Errorf("connector agent's view: %d %v, want no connection, no published card", status, out)
	}

	// No limiter: a peer's call is served.
	status, _, out = do("POST", "/agents/alice/tokens", owner, "application/json", `{"label":"carol"}`)
	peer, _ := out["token"].(string)
	if status != http.StatusCreated || peer == "" {
		t.Fatalf("a peer token: %d %v", status, out)
	}
	if status, _, out = do("POST", "/a/alice", peer, "application/json", send); status != http.StatusOK || out["result"] == nil {
		t.Errorf("a peer's SendMessage: %d %v", status, out)
	}
	if status, _, out = do("GET", "/readyz", "", "", ""); status != http.StatusOK || out["tls"] != nil {
		t.Errorf("readyz: %d %v, want ready, no tls", status, out)
	}
}
