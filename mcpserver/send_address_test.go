package mcpserver_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// notHere is the end of send's refusal of another deployment's URL.
const notHere = " is not an address of this deployment; to send to a remote agent, sync it as an alias: switchboard peers sync"

// TestSendURLOfAnotherDeployment: send to a URL reaches an agent of this
// deployment only when the URL is on this deployment's origin (here taken
// from the request: no public URL is configured); the URL of a synced
// alias goes to the remote agent with the alias's token; any other URL is
// refused (another origin, credentials, or a path of this origin that is no
// address: publicurl.HandleAt), whatever handle its path holds, and nothing
// is sent. The account endpoint does the same.
func TestSendURLOfAnotherDeployment(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	helper, other := w.agent("helper"), w.agent("other")
	for _, g := range []string{helper.ID, other.ID} {
		_, err := w.db.JoinCommunity(context.Background(), g, "team", true)
		must(t, err)
	}
	remote := newRemoteAgent(t, "1.0", "sbp_remote-secret")
	w.sync("helper", "faraway", remote.srv.URL, remote.token)
	cs := connect(t, w.mcpURL(helper), w.mcpToken(helper, "claude"), "2025-06-18")
	r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["helper"]}`, nil)
	acct := connect(t, w.srv.URL+"/mcp", r.json["token"].(string), "2025-06-18")

	host := strings.TrimPrefix(w.srv.URL, "http://")
	_, port, err := net.SplitHostPort(host)
	must(t, err)
	for _, to := range []string{
		"https://other.example/a/other",
		"https://" + host + "/a/other",          // another scheme
		"http://127.0.0.2:" + port + "/a/other", // another host, the same port
		"http://localhost:1/a/other",            // another port
		"http://user@" + host + "/a/other",      // credentials
		remote.srv.URL + "/a/other",             // the alias's origin, not its URL
		w.srv.URL + "/x/a/other",                // this origin, but no address of it
		w.srv.URL + "/a/other/mcp",
	} {
		if msg := toolError(t, cs, "send", map[string]any{"to": to, "text": "hello"}); msg != "Error: "+to+notHere {
			t.Errorf("send to %s: %q", to, msg)
		}
		if msg := toolError(t, acct, "send", map[string]any{"agent": "helper", "to": to, "text": "hello"}); msg != "Error: "+to+notHere {
			t.Errorf("send to %s on the account endpoint: %q", to, msg)
		}
	}
	if n := w.received(other); n != 0 {
		t.Fatalf("%d tasks reached the local agent of the handle, want 0", n)
	}

	// This deployment's address, as the request reached it.
	sent := call(t, cs, "send", map[string]any{"to": w.srv.URL + "/a/other", "text": "hello"})
	if sent["target"] != w.srv.URL+"/a/other" || w.received(other) != 1 {
		t.Fatalf("send to this deployment's address: %v, %d tasks", sent, w.received(other))
	}
	call(t, acct, "send", map[string]any{"agent": "helper", "to": strings.ToUpper(w.srv.URL[:4]) + w.srv.URL[4:] + "/a/other", "text": "again"})
	if n := w.received(other); n != 2 {
		t.Fatalf("%d tasks, want 2", n)
	}
	// A synced alias, by its name or its URL.
	for _, to := range []string{"faraway", remote.srv.URL, remote.srv.URL + "/"} {
		sent := call(t, cs, "send", map[string]any{"to": to, "text": "far"})
		if sent["target"] != "faraway" || !strings.HasPrefix(sent["endpoint"].(string), remote.srv.URL) {
			t.Fatalf("send to %s: %v", to, sent)
		}
	}
	if got := remote.authorizations(); len(got) == 0 || got[len(got)-1] != "Bearer "+remote.token {
		t.Fatalf("the remote agent was sent %q", got)
	}
}

// TestSendURLPublicURL: with a public URL configured, this deployment's
// addresses are under it (its path too), not the Host a request names.
func TestSendURLPublicURL(t *testing.T) {
	const public = "https://switchboard.example/sb"
	w := newWorldConfig(t, "sqlite", nil, httpapi.Config{PublicURL: public})
	helper, other := w.agent("helper"), w.agent("other")
	for _, g := range []string{helper.ID, other.ID} {
		_, err := w.db.JoinCommunity(context.Background(), g, "team", true)
		must(t, err)
	}
	cs := connect(t, w.mcpURL(helper), w.mcpToken(helper, "claude"), "2025-06-18")
	for _, to := range []string{w.srv.URL + "/a/other", "https://switchboard.example/a/other", "https://switchboard.example/sbx/a/other"} {
		if msg := toolError(t, cs, "send", map[string]any{"to": to, "text": "hello"}); msg != "Error: "+to+notHere {
			t.Errorf("send to %s: %q", to, msg)
		}
	}
	if n := w.received(other); n != 0 {
		t.Fatalf("%d tasks, want 0", n)
	}
	call(t, cs, "send", map[string]any{"to": "HTTPS://Switchboard.Example:443/sb/a/other", "text": "hello"})
	if n := w.received(other); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

// TestSendURLAgentDomain: the root of an agent's domain is its address:
// send to https://{domain} (or with a trailing slash) reaches it; a path
// under the domain, or a domain no agent holds, names nobody.
func TestSendURLAgentDomain(t *testing.T) {
	w := newWorldConfig(t, "sqlite", nil, httpapi.Config{PublicURL: "https://switchboard.example"})
	helper, other := w.agent("helper"), w.agent("other")
	for _, g := range []string{helper.ID, other.ID} {
		_, err := w.db.JoinCommunity(context.Background(), g, "team", true)
		must(t, err)
	}
	d := "other.example.com"
	_, err := w.db.UpdateAgent(context.Background(), other.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	cs := connect(t, w.mcpURL(helper), w.mcpToken(helper, "claude"), "2025-06-18")
	for _, to := range []string{"https://other.example.com/mcp", "https://nobody.example.com/", "http://other.example.com/"} {
		if msg := toolError(t, cs, "send", map[string]any{"to": to, "text": "hello"}); msg != "Error: "+to+notHere {
			t.Errorf("send to %s: %q", to, msg)
		}
	}
	for i, to := range []string{"https://other.example.com", "https://Other.Example.com/"} {
		call(t, cs, "send", map[string]any{"to": to, "text": "hello"})
		if n := w.received(other); n != i+1 {
			t.Fatalf("send to %s: %d tasks, want %d", to, n, i+1)
		}
	}
}
