package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/server"
)

// TestReachabilityACME: a deployment that obtains its certificates from
// a real ACME CA (Pebble) reports an agent's domain (its certificate
// obtained on demand) and its address on the deployment's name reachable,
// with Pebble's certificate and its days left, and the card; an agent
// whose domain points at another address is reported with both
// addresses.
func TestReachabilityACME(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	acmetest.SetA(t, "moved.test", "127.0.0.9")
	httpPort, httpsPort := freePort(t), freePort(t)
	ca.Bind(httpPort, httpsPort)
	cfg := server.Config{
		Addr: "127.0.0.1:" + strconv.Itoa(httpPort), HTTPSAddr: "127.0.0.1:" + strconv.Itoa(httpsPort), DataDir: t.TempDir(),
		ACME:      certs.Config{Domains: []string{"base.test"}, CA: ca.DirectoryURL, CARootFile: ca.RootFile, DNSResolver: ca.DNS},
		ReachPort: httpsPort, ReachRoots: ca.Roots(), OutboundAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	s := server.New(cfg, testLogger())
	if err := s.Run(context.Background()); err != nil {
		_ = s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	waitCert(t, s, "base.test", ca.Roots())
	owner := s.GeneratedOwnerToken
	ownerCall(t, s, owner, "POST", "/agents", `{"handle":"bob","mode":"inbox","domain":"bot.test"}`, nil)
	ownerCall(t, s, owner, "POST", "/agents", `{"handle":"mo","mode":"inbox","domain":"moved.test"}`, nil)
	// The certificate of bot.test is obtained at its first handshake.
	waitCert(t, s, "bot.test", ca.Roots())

	var bob ownerapi.AgentReachability
	ownerCall(t, s, owner, "GET", "/agents/bob/reachability", "", &bob)
	if len(bob.Addresses) != 2 || bob.Addresses[0].URL != "https://bot.test" || bob.Addresses[1].URL != "https://base.test/a/bob" {
		t.Fatalf("bob's addresses: %+v", bob.Addresses)
	}
	for _, a := range bob.Addresses {
		c := a.Certificate
		if a.State != ownerapi.ReachOK || a.DNS.State != ownerapi.ReachOK || c.State != ownerapi.ReachOK || a.Card == nil || a.Card.State != ownerapi.ReachOK ||
			c.DaysLeft == nil || *c.DaysLeft < 1 || !strings.Contains(strings.ToLower(c.Issuer), "pebble") {
			t.Fatalf("%s: %+v (certificate %+v, card %+v)", a.URL, a, c, a.Card)
		}
	}
	var mo ownerapi.AgentReachability
	ownerCall(t, s, owner, "GET", "/agents/mo/reachability", "", &mo)
	if a := mo.Addresses[0]; a.State != ownerapi.ReachFailing ||
		!strings.Contains(a.Problem, "DNS for moved.test points at 127.0.0.9, not this server (127.0.0.1)") {
		t.Fatalf("moved.test: %+v", a)
	}
}

// ownerCall sends an owner API request with token and decodes the
// answer into out (when not nil); it fails the test on a status that is
// not 2xx.
func ownerCall(t *testing.T, s *server.Server, token, method, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e ownerapi.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, e.Error)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// freePort returns a loopback TCP port free a moment ago: Pebble must be
// told the server's ports before the server starts, for the checks'
// roots.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
