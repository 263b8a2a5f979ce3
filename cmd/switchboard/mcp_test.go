package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// TestMCPTokenCommands mints, lists and revokes an MCP token with the CLI,
// and the token opens the agent's MCP endpoint until it is revoked.
func TestMCPTokenCommands(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	out := cli(t, m, "mcp", "token", "create", "--agent", "desk", "--label", "claude")
	secret := regexp.MustCompile(`sbm_[A-Za-z0-9_-]{43}`).FindString(out)
	if secret == "" || !strings.Contains(out, "claude mcp add --transport http desk "+m.URL()+"/a/desk/mcp") {
		t.Fatalf("create printed:\n%s", out)
	}
	if got := mcpStatus(t, m.URL()+"/a/desk/mcp", secret); got != http.StatusOK {
		t.Fatalf("the new token: HTTP %d", got)
	}
	list := cli(t, m, "mcp", "token", "list")
	id := regexp.MustCompile(`(?m)^([0-9a-f]{16})\s+desk\s+claude\s`).FindStringSubmatch(list)
	if id == nil || strings.Contains(list, "never") {
		t.Fatalf("list (used once) printed:\n%s", list)
	}
	cli(t, m, "mcp", "token", "revoke", id[1])
	if got := mcpStatus(t, m.URL()+"/a/desk/mcp", secret); got != http.StatusUnauthorized {
		t.Fatalf("the revoked token: HTTP %d", got)
	}
}

// TestAccountMCPToken mints an account token for two agents with the CLI;
// it opens {server}/mcp.
func TestAccountMCPToken(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	cli(t, m, "agent", "create", "shelf", "--mode", "inbox")
	if _, err := cliErr(m, "mcp", "token", "create", "--agent", "desk", "--agent", "shelf"); err == nil {
		t.Fatal("an agent's token for two agents was minted")
	}
	out := cli(t, m, "mcp", "token", "create", "--account", "--agent", "desk", "--agent", "shelf", "--label", "desk")
	secret := regexp.MustCompile(`sbm_[A-Za-z0-9_-]{43}`).FindString(out)
	if secret == "" || !strings.Contains(out, m.URL()+"/mcp ") {
		t.Fatalf("create --account printed:\n%s", out)
	}
	if got := mcpStatus(t, m.URL()+"/mcp", secret); got != http.StatusOK {
		t.Fatalf("the account token on /mcp: HTTP %d", got)
	}
	if list := cli(t, m, "mcp", "token", "list"); !strings.Contains(list, "account: desk,shelf") {
		t.Fatalf("list printed:\n%s", list)
	}
}

// TestServeWithoutMCP: --mcp=false serves no MCP route at all.
func TestServeWithoutMCP(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.MCPOff = true })
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	if got := mcpStatus(t, m.URL()+"/a/desk/mcp", "sbm_x"); got != http.StatusNotFound {
		t.Fatalf("POST /a/desk/mcp: HTTP %d, want 404", got)
	}
	if got := mcpStatus(t, m.URL()+"/mcp", "sbm_x"); got != http.StatusNotFound {
		t.Fatalf("POST /mcp: HTTP %d, want 404", got)
	}
	if _, err := cliErr(m, "mcp", "token", "create", "--agent", "desk"); err == nil {
		t.Fatal("minting an MCP token worked with MCP off")
	}
}

func mcpStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestAgentMCPSwitch: switchboard agent create --no-mcp and agent update
// --[no-]mcp turn an agent's MCP endpoint off (404) and on (401 without a
// token); agent show says which.
func TestAgentMCPSwitch(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	endpoint := m.URL() + "/a/helper/mcp"
	if out := cli(t, m, "agent", "create", "helper", "--mode", "inbox", "--no-mcp"); !strings.Contains(out, "helper") {
		t.Fatalf("create: %s", out)
	}
	if got := mcpStatus(t, endpoint, "x"); got != http.StatusNotFound {
		t.Fatalf("created with --no-mcp: HTTP %d, want 404", got)
	}
	if out := cli(t, m, "agent", "show", "helper"); !regexp.MustCompile(`(?m)^mcp\s+off$`).MatchString(out) {
		t.Fatalf("agent show:\n%s", out)
	}
	if out := cli(t, m, "agent", "update", "helper", "--mcp"); !strings.Contains(out, endpoint) {
		t.Fatalf("update --mcp:\n%s", out)
	}
	if got := mcpStatus(t, endpoint, "x"); got != http.StatusUnauthorized {
		t.Fatalf("after --mcp: HTTP %d, want 401", got)
	}
	cli(t, m, "agent", "update", "helper", "--no-mcp")
	if got := mcpStatus(t, endpoint, "x"); got != http.StatusNotFound {
		t.Fatalf("after --no-mcp: HTTP %d, want 404", got)
	}
}
