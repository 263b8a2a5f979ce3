package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// pairInBackground runs switchboard pair against m's agent and returns a
// channel with its output and error once it ends.
func pairInBackground(m *server.Server, configDir string, args ...string) <-chan [2]any {
	done := make(chan [2]any, 1)
	go func() {
		var buf bytes.Buffer
		full := append([]string{"--config-dir", configDir, "pair"}, args...)
		err := run(context.Background(), full, &buf)
		done <- [2]any{buf.String(), err}
	}()
	return done
}

// pollEverySecond asks pairing clients to poll every second (the least
// the protocol's whole seconds allow), not every pairing.DefaultInterval:
// a test that waits for a client's token waits that long after the
// approval.
func pollEverySecond(c *server.Config) { c.PairingInterval = time.Second }

// approveNext waits for one pending request of the account and approves
// it with the CLI, by its code alone.
func approveNext(t *testing.T, m *server.Server) {
	t.Helper()
	var code string
	testwait.For(t, "a pairing request", func() bool {
		var all []agentPairings
		if err := json.Unmarshal([]byte(cli(t, m, "--json", "pairing", "list")), &all); err != nil {
			t.Fatal(err)
		}
		for _, a := range all {
			for _, p := range a.Pairings {
				code = p.UserCode
			}
		}
		return code != ""
	})
	if out := cli(t, m, "pairing", "approve", strings.ToLower(code)); !strings.Contains(out, "approved") {
		t.Fatalf("approve: %s", out)
	}
}

// TestPairWithTheDeviceFlow: switchboard pair (golang.org/x/oauth2's device
// flow, an implementation independent of the server's) gets a token the
// owner approves with switchboard pairing approve, stores it in peers.json
// (0600, never printed), and pairing again replaces it.
func TestPairWithTheDeviceFlow(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", pollEverySecond)
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	conf := t.TempDir()
	addr := m.URL() + "/a/helper"

	done := pairInBackground(m, conf, addr, "--name", "Barry Bot", "--alias", "helper-there", "--allow-private")
	approveNext(t, m)
	res := <-done
	out, err := res[0].(string), res[1]
	if err != nil {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	if !strings.Contains(out, "code: ") || !strings.Contains(out, addr+"/device?user_code=") || !strings.Contains(out, `labelled "Barry-Bot"`) {
		t.Fatalf("pair printed:\n%s", out)
	}
	cfg, err := loadPeers(conf)
	if err != nil {
		t.Fatal(err)
	}
	first := cfg.Peers["helper-there"]
	if first == nil || first.URL != addr || !strings.HasPrefix(first.Token, "sbp_") || strings.Contains(out, first.Token) {
		t.Fatalf("stored %+v; printed:\n%s", first, out)
	}
	if fi, err := os.Stat(filepath.Join(conf, peersFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("peers.json: %v %v", fi.Mode(), err)
	}

	// Again with the same alias: the request presents the stored token, and
	// the approval replaces it under the same label.
	done = pairInBackground(m, conf, addr, "--name", "Barry Bot", "--alias", "helper-there")
	approveNext(t, m)
	if res := <-done; res[1] != nil {
		t.Fatalf("pair again: %v\n%s", res[1], res[0])
	}
	cfg, _ = loadPeers(conf)
	if cfg.Peers["helper-there"].Token == first.Token {
		t.Fatal("the token was not replaced")
	}
	list := cli(t, m, "token", "list", "--agent", "helper", "--all")
	if strings.Count(list, "Barry-Bot") != 2 || !strings.Contains(list, "revoked") || strings.Contains(list, "Barry-Bot-2") {
		t.Fatalf("tokens after a re-pairing:\n%s", list)
	}
}

// TestPairingRequestWakes: a device authorization request wakes an agent
// that has a wake configuration at once (a long debounce does not hold
// it), with the code, the claimed name marked untrusted and the command
// that lists the requests.
func TestPairingRequestWakes(t *testing.T) {
	bodies := make(chan []byte, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		_, _ = io.WriteString(w, "ok")
	}))
	defer recv.Close()
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	cli(t, m, "agent", "create", "sleeper", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_WAKE_KEY", "wake-key-from-the-environment-0123")
	cli(t, m, "wake", "set", "--agent", "sleeper", "--url", recv.URL+"/hook", "--debounce", "10m")

	resp, err := http.PostForm(m.URL()+"/a/sleeper/oauth/device_authorization", url.Values{"client_name": {"Barry"}, "client_id": {"barry-cli"}})
	if err != nil {
		t.Fatal(err)
	}
	var da struct {
		UserCode string `json:"user_code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&da)
	_ = resp.Body.Close()
	var got struct {
		Kind, From, Preview, Hint, ContextID string
		Untrusted                            []string
	}
	testwait.For(t, "the pairing wake", func() bool {
		select {
		case b := <-bodies:
			must(t, json.Unmarshal(b, &got))
			return true
		default:
			return false
		}
	})
	if got.Kind != "pairing_request" || got.From != "Barry" || got.ContextID != "pairing-"+strings.ReplaceAll(da.UserCode, "-", "") ||
		!strings.Contains(got.Preview, "barry-cli") || !strings.Contains(got.Hint, "pairing list --agent sleeper") {
		t.Fatalf("wake %+v for code %s", got, da.UserCode)
	}
}

// TestPairWithPairingOff: an agent whose owner turned pairing off says so,
// and the owner's deny ends switchboard pair with an error that says it.
func TestPairWithPairingOff(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	if out := cli(t, m, "agent", "update", "helper", "--pairing", "off"); !strings.Contains(out, "off") {
		t.Fatalf("agent update printed:\n%s", out)
	}
	res := <-pairInBackground(m, t.TempDir(), m.URL()+"/a/helper")
	if err, _ := res[1].(error); err == nil || !strings.Contains(err.Error(), "does not take pairing requests") {
		t.Fatalf("pair with pairing off: %v\n%s", res[1], res[0])
	}
	if _, err := cliErr(m, "agent", "update", "helper", "--pairing", "sometimes"); err == nil {
		t.Fatal("a bad pairing mode was taken")
	}
}

// TestClusterPairingAcrossInstances: the codes come from one instance, the
// owner decides on another, and the polls go to each in turn: every
// instance answers from the store, and the token works everywhere.
func TestClusterPairingAcrossInstances(t *testing.T) {
	c := newCluster(t, 2, nil)
	c.agent("helper", map[string]any{"mode": "inbox"})
	device, code := requestCode(t, c.bases[0]+"/a/helper", url.Values{"client_name": {"Barry"}})
	poll := func(i int) map[string]any {
		res, err := http.PostForm(c.bases[i]+"/a/helper/oauth/token", url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {device}})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return out
	}
	if got := poll(1); got["error"] != "authorization_pending" {
		t.Fatalf("first poll on instance 1: %v", got)
	}
	if got := poll(0); got["error"] != "slow_down" { // the interval is the request's, whichever instance is asked
		t.Fatalf("a quick second poll on instance 0: %v", got)
	}
	var list []map[string]any
	if st := c.owner(1, "GET", "/agents/helper/pairings", nil, &list); st != http.StatusOK || len(list) != 1 || list[0]["user_code"] != code {
		t.Fatalf("pending on instance 1: %d %v", st, list)
	}
	if st := c.owner(1, "POST", "/agents/helper/pairings/"+code+"/approve", nil, nil); st != http.StatusOK {
		t.Fatalf("approve on instance 1: %d", st)
	}
	got := poll(0)
	token, _ := got["access_token"].(string)
	if token == "" || got["peer_label"] != "Barry" {
		t.Fatalf("redeem on instance 0: %v", got)
	}
	if again := poll(1); again["error"] != "invalid_grant" {
		t.Fatalf("a second redemption on instance 1: %v", again)
	}
	for i := range c.bases {
		if st, body := peerGetTask(t, c.bases[i]+"/a/helper", token); st != http.StatusOK {
			t.Fatalf("the paired token on instance %d: %d %s", i, st, body)
		}
	}
}

// peerGetTask calls GetTask at the address with the token and returns the
// HTTP status (200 for any JSON-RPC answer, 401 for a refused token).
func peerGetTask(t *testing.T, addr, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", addr, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestPairingDecidedByTheAgent: in pairing mode agent, the agent lists and
// decides its requests with its own token (switchboard pairing list, deny
// and approve with --agent and --label); without --agent the CLI says to
// name it; in mode human the agent's token may not even list them. The
// owner's deny finds the agent by the code alone.
func TestPairingDecidedByTheAgent(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	created := cli(t, m, "agent", "create", "helper", "--mode", "connector")
	i := strings.Index(created, "sba_")
	if i < 0 {
		t.Fatalf("no agent token in:\n%s", created)
	}
	agentToken := strings.Fields(created[i:])[0]
	request := func() string {
		t.Helper()
		res, err := http.PostForm(m.URL()+"/a/helper/oauth/device_authorization", url.Values{"client_name": {"Barry"}})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var da struct {
			UserCode string `json:"user_code"`
		}
		must(t, json.NewDecoder(res.Body).Decode(&da))
		return da.UserCode
	}
	asAgent := func(args ...string) (string, error) {
		return cliErr(m, append([]string{"--owner-token", agentToken}, args...)...)
	}

	code := request()
	if _, err := asAgent("pairing", "list", "--agent", "helper"); err == nil || !strings.Contains(err.Error(), "human") {
		t.Fatalf("the agent listing in mode human: %v", err)
	}
	if out := cli(t, m, "pairing", "deny", code); !strings.Contains(out, "denied "+code+" for helper") {
		t.Fatalf("the owner's deny: %s", out)
	}

	cli(t, m, "agent", "update", "helper", "--pairing", "agent")
	code = request()
	if out, err := asAgent("pairing", "list", "--agent", "helper"); err != nil || !strings.Contains(out, code) || !strings.Contains(out, `"Barry"`) {
		t.Fatalf("the agent's list: %v\n%s", err, out)
	}
	if _, err := asAgent("pairing", "list"); err == nil || !strings.Contains(err.Error(), "--agent") {
		t.Fatalf("the agent's list without --agent: %v", err)
	}
	if _, err := asAgent("pairing", "approve", code); err == nil || !strings.Contains(err.Error(), "--agent") {
		t.Fatalf("the agent's approve without --agent: %v", err)
	}
	if out, err := asAgent("pairing", "approve", code, "--agent", "helper", "--label", "barry"); err != nil || !strings.Contains(out, `labelled "barry"`) {
		t.Fatalf("the agent's approve: %v\n%s", err, out)
	}
	code = request()
	if out, err := asAgent("pairing", "deny", strings.ToLower(code), "--agent", "helper"); err != nil || !strings.Contains(out, "denied") {
		t.Fatalf("the agent's deny: %v\n%s", err, out)
	}
}
