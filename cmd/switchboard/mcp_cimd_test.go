package main

import (
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// TestMCPOAuthClientMetadataDocument runs OAuth end to end with a client
// whose client_id is the https URL of its metadata document, served by
// the test over TLS on loopback (the server runs with
// --allow-private-networks and trusts the test's certificate): the
// metadata says documents are supported; authorize fetches the document,
// the consent page names the host that published it; the code, the
// token, an MCP call, a refresh; the grant is listed by switchboard mcp
// grants and revoked there. Documents whose client_id differs, that do
// not list the redirect URI, that are too large or that answer with a
// redirect are refused on the page, without a redirect and without
// saying why.
func TestMCPOAuthClientMetadataDocument(t *testing.T) {
	docs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		self := "https://" + r.Host + r.URL.Path
		doc := func(id string, redirects string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"client_id":%q,"client_name":"Claude Code","redirect_uris":[%s],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`, id, redirects)
		}
		switch r.URL.Path {
		case "/client.json":
			doc(self, `"http://127.0.0.1/callback"`)
		case "/mismatch.json":
			doc("https://"+r.Host+"/client.json", `"http://127.0.0.1/callback"`)
		case "/elsewhere.json":
			doc(self, `"https://app.example/cb"`)
		case "/large.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"client_id":%q,"redirect_uris":["http://127.0.0.1/callback"],"pad":"%s"}`, self, strings.Repeat("x", 6000))
		case "/redirect.json":
			http.Redirect(w, r, "/client.json", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	docs.Config.ErrorLog = log.New(io.Discard, "", 0)
	docs.StartTLS()
	t.Cleanup(docs.Close)
	roots := x509.NewCertPool()
	roots.AddCert(docs.Certificate())

	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.AllowPrivateNetworks = true
		c.ClientMetadataRootCAs = roots
	})
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	base, mcpURL, issuer := m.URL(), m.URL()+"/a/helper/mcp", m.URL()+"/a/helper"
	if _, asm := getJSON(t, base+"/.well-known/oauth-authorization-server/a/helper"); asm["client_id_metadata_document_supported"] != true {
		t.Fatalf("the metadata does not say documents are supported: %v", asm)
	}

	clientID := docs.URL + "/client.json"
	verifier, challenge := pkce("document-verifier-")
	redirect := "http://127.0.0.1:45678/callback"
	authorizeWith := func(id string) string {
		q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {redirect}, "state": {"st-doc"},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {mcpURL}, "scope": {"inbox"}}
		return "/a/helper/oauth/authorize?" + q.Encode()
	}
	browser := newPageClient(t, base)
	browser.signIn(m.GeneratedOwnerToken)
	authorize := authorizeWith(clientID)
	if _, page := browser.get(authorize); !strings.Contains(page, "Client identity published at "+strings.TrimPrefix(docs.URL, "https://")) {
		t.Fatalf("the consent page does not name the document's host:\n%s", page)
	}
	code := consent(t, browser, authorize, "approve", redirect, "st-doc", issuer)

	tokenURL := issuer + "/oauth/token"
	status, tok := postJSON(t, tokenURL, "", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"code_verifier": {verifier}, "redirect_uri": {redirect}})
	access, _ := tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if status != http.StatusOK || access == "" || refresh == "" {
		t.Fatalf("token: %d %v", status, tok)
	}
	if names := listTools(t, mcpURL, access); !slices.Contains(names, "inbox") {
		t.Fatalf("tools/list with the access token: %v", names)
	}
	status, fresh := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	access2, _ := fresh["access_token"].(string)
	refresh2, _ := fresh["refresh_token"].(string)
	if status != http.StatusOK || access2 == "" || refresh2 == "" {
		t.Fatalf("refresh: %d %v", status, fresh)
	}
	if names := listTools(t, mcpURL, access2); len(names) == 0 {
		t.Fatal("the refreshed token lists no tools")
	}

	// The grant, listed and revoked.
	list := cli(t, m, "mcp", "grants")
	row := regexp.MustCompile(`(?m)^([0-9a-f]{16})\s+helper\s+"Claude Code"\s+mcp-claude-code\s+` + regexp.QuoteMeta(clientID) + `\s+\S+\s+\S+$`).FindStringSubmatch(list)
	if row == nil {
		t.Fatalf("the grant is not listed:\n%s", list)
	}
	// A refresh after the listing changes the grant's id, not its label; a
	// token the owner created is no grant.
	status, fresh = postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh2}, "client_id": {clientID}})
	access2, _ = fresh["access_token"].(string)
	refresh2, _ = fresh["refresh_token"].(string)
	if status != http.StatusOK || access2 == "" {
		t.Fatalf("second refresh: %d %v", status, fresh)
	}
	if _, err := cliErr(m, "mcp", "grants", "revoke", row[1]); err == nil || !strings.Contains(err.Error(), "no OAuth grant") {
		t.Fatalf("revoke by the id before the refresh: %v", err)
	}
	cli(t, m, "mcp", "token", "create", "--agent", "helper", "--label", "manual")
	if _, err := cliErr(m, "mcp", "grants", "revoke", "manual"); err == nil || !strings.Contains(err.Error(), "no OAuth grant") {
		t.Fatalf("revoke a token the owner created as a grant: %v", err)
	}
	if out := cli(t, m, "mcp", "grants", "revoke", "mcp-claude-code"); !strings.Contains(out, "revoked OAuth grant mcp-claude-code (") {
		t.Fatalf("revoke: %s", out)
	}
	if got := mcpStatus(t, mcpURL, access2); got != http.StatusUnauthorized {
		t.Fatalf("the access token after the grant was revoked: HTTP %d", got)
	}
	if status, _ := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh2}}); status != http.StatusBadRequest {
		t.Fatalf("the refresh token after the grant was revoked: HTTP %d", status)
	}
	if list := cli(t, m, "mcp", "grants"); strings.Contains(list, clientID) {
		t.Fatalf("a revoked grant is listed:\n%s", list)
	}

	// Refusals: a page (400), no redirect, nothing about the fetch.
	for _, path := range []string{"/mismatch.json", "/elsewhere.json", "/large.json", "/redirect.json", "/missing.json"} {
		res, page := browser.get(authorizeWith(docs.URL + path))
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s", path, res.StatusCode, res.Header.Get("Location"))
		}
		want := "client metadata document could not be used"
		if path == "/elsewhere.json" {
			want = "is not one the application registered"
		}
		if !strings.Contains(page, want) || strings.Contains(page, "bytes") || strings.Contains(page, "HTTP") {
			t.Errorf("%s: the page says:\n%s", path, page)
		}
	}
}
