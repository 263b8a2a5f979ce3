package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// bearerRoundTripper adds a bearer token to every request.
type bearerRoundTripper struct{ token string }

func (b bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestPeersSync: the aliases of the client config go to the server for
// one agent (never printed with their tokens); its MCP tool send then
// reaches an agent of another Switchboard by alias, with the synced token,
// and poll_outbound reads the answer there.
func TestPeersSync(t *testing.T) {
	remote := MustRunMain(t, t.TempDir(), "")
	cli(t, remote, "agent", "create", "bob", "--mode", "inbox")
	var issued struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, remote, "--json", "token", "issue", "--agent", "bob", "alice")), &issued); err != nil {
		t.Fatal(err)
	}
	ours := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} // the other server is on loopback
	})
	cli(t, ours, "agent", "create", "alice", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", filepath.Join(t.TempDir(), "cfg"))

	if _, _, err := cliIO(ours, issued.Token+"\n", "peers", "add", "bob", remote.URL()+"/a/bob", "--token-stdin", "--allow-private"); err != nil {
		t.Fatal(err)
	}
	cli(t, ours, "peers", "add", "carol", "https://carol.example", "--token-env", "CAROL_TOKEN") // no token: not synced

	// All aliases: bob goes, carol has no token and fails the command.
	out, errOut, err := cliIO(ours, "", "peers", "sync", "--agent", "alice")
	if err == nil || !strings.Contains(out, "synced bob → "+remote.URL()+"/a/bob for alice") || !strings.Contains(errOut, "carol: no token") ||
		strings.Contains(out+errOut, issued.Token) {
		t.Fatalf("peers sync: %v\n%s\n%s", err, out, errOut)
	}
	out = cli(t, ours, "peers", "sync", "--agent", "alice", "bob")
	if !strings.Contains(out, "synced bob") || strings.Contains(out, issued.Token) {
		t.Fatalf("peers sync bob: %s", out)
	}
	if _, err := cliErr(ours, "peers", "sync", "--agent", "alice", "nobody"); err == nil {
		t.Fatal("syncing an alias that is not in the config worked")
	}
	out = cli(t, ours, "peers", "synced", "--agent", "alice")
	if !strings.Contains(out, "bob  "+remote.URL()+"/a/bob  token kept") || strings.Contains(out, "carol") || strings.Contains(out, issued.Token) {
		t.Fatalf("peers synced: %s", out)
	}
	if out = cli(t, ours, "--json", "peers", "synced", "--agent", "alice"); !strings.Contains(out, `"has_token": true`) || strings.Contains(out, issued.Token) {
		t.Fatalf("peers synced --json: %s", out)
	}

	// The MCP tool send reaches bob on the other server with the token.
	var minted struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, ours, "--json", "mcp", "token", "create", "--agent", "alice")), &minted); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ours.URL() + "/a/alice/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerRoundTripper{minted.Token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callTool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var m map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &m)
		return m
	}
	sent := callTool("send", map[string]any{"to": "bob", "text": "review PR 12?"})
	taskID, _ := sent["taskId"].(string)
	if taskID == "" || sent["target"] != "bob" {
		t.Fatalf("send: %v", sent)
	}
	if inbox := cli(t, remote, "inbox", "--agent", "bob"); !strings.Contains(inbox, "review PR 12?") {
		t.Fatalf("bob's inbox: %s", inbox)
	}
	cli(t, remote, "reply", taskID, "--text", "looks good")
	testwait.For(t, "the answer to be polled", func() bool {
		polled := callTool("poll_outbound", map[string]any{"taskId": taskID})
		return polled["state"] == "completed" && strings.Contains(polled["answer"].(string), "looks good")
	})

	if out = cli(t, ours, "peers", "unsync", "--agent", "alice", "bob"); !strings.Contains(out, "unsynced bob for alice") {
		t.Fatalf("peers unsync: %s", out)
	}
	if out = cli(t, ours, "peers", "synced", "--agent", "alice"); !strings.Contains(out, "no aliases synced") {
		t.Fatalf("after unsync: %s", out)
	}
}
