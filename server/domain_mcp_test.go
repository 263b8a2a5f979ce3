package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestAgentDomainMCP: the MCP endpoint at the root of an agent domain
// answers an MCP token of the agent; without one, its challenge names
// the domain's resource metadata, which names the domain's endpoint and
// authorization server; at the agent's address on the deployment, the
// same names that address.
func TestAgentDomainMCP(t *testing.T) {
	s := newAuthzServer(t, "", facetest.WithConfig(func(c *httpapi.Config) { c.PublicURL = facetest.DeploymentURL }))
	e := s.estate("bob", false)
	d := "bot.example.com"
	_, err := s.DB.UpdateAgent(context.Background(), e.agent.ID, switchboard.AgentUpdate{Domain: &d})
	facetest.Must(t, err)
	mcp := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	r := s.At("POST", "http://bot.example.com/mcp", mcp, list)
	if r.Status != http.StatusUnauthorized ||
		!strings.Contains(r.Header.Get("WWW-Authenticate"), `resource_metadata="http://bot.example.com/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	md := s.At("GET", "http://bot.example.com/.well-known/oauth-protected-resource/mcp", nil, "")
	servers, _ := md.JSON["authorization_servers"].([]any)
	if md.Status != http.StatusOK || md.JSON["resource"] != "http://bot.example.com/mcp" || len(servers) != 1 || servers[0] != "http://bot.example.com" {
		t.Fatalf("MCP resource metadata: %d %s", md.Status, md.Body)
	}
	as := s.At("GET", "http://bot.example.com/.well-known/oauth-authorization-server", nil, "")
	if as.JSON["authorization_endpoint"] != "http://bot.example.com/oauth/authorize" || as.JSON["registration_endpoint"] != "http://bot.example.com/oauth/register" {
		t.Fatalf("authorization server metadata: %s", as.Body)
	}
	mcp["Authorization"] = "Bearer " + e.mcpToken
	if r := s.At("POST", "http://bot.example.com/mcp", mcp, list); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"name":"inbox"`) {
		t.Fatalf("with the agent's MCP token: %d %s", r.Status, r.Body)
	}
	delete(mcp, "Authorization")
	r = s.At("POST", facetest.DeploymentURL+"/a/bob/mcp", mcp, list)
	if !strings.Contains(r.Header.Get("WWW-Authenticate"), `resource_metadata="`+facetest.DeploymentURL+`/.well-known/oauth-protected-resource/a/bob/mcp"`) {
		t.Fatalf("at the deployment's address: %q", r.Header.Get("WWW-Authenticate"))
	}
	md = s.At("GET", facetest.DeploymentURL+"/.well-known/oauth-protected-resource/a/bob/mcp", nil, "")
	if md.JSON["resource"] != facetest.DeploymentURL+"/a/bob/mcp" {
		t.Fatalf("MCP resource metadata at the deployment's address: %s", md.Body)
	}
}
