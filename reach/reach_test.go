package reach_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/reach"
)

// bot is the agent of the tests: bob, at bot.example.com.
var bot = &switchboard.Agent{Handle: "bob", Domain: "bot.example.com"}

// TestAgentOK: an agent's domain and its address on the deployment's
// name, both resolving to the server, with certificates of a trusted CA
// for 60 days more, serving the agent's card: every check ok, with the
// addresses, the days left and the issuer.
func TestAgentOK(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	s.add("bot.example.com", ca.issue(t, now.Add(-30*24*time.Hour), now.Add(61*24*time.Hour), "bot.example.com"),
		card("/.well-known/agent-card.json", "https://bot.example.com"))
	s.add("sb.example.com", ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "sb.example.com"),
		card("/a/bob/.well-known/agent-card.json", "https://sb.example.com/a/bob"))
	c := newChecker(t, s, ca)
	targets := c.AgentTargets(bot)
	if len(targets) != 2 || targets[0].Name != "bot.example.com" || targets[1].URL != "https://sb.example.com/a/bob" {
		t.Fatalf("targets: %+v", targets)
	}
	got := c.CheckAll(context.Background(), targets)
	for _, r := range got {
		if r.State != ownerapi.ReachOK || r.Problem != "" || r.DNS.State != ownerapi.ReachOK || r.Certificate.State != ownerapi.ReachOK ||
			r.Card == nil || r.Card.State != ownerapi.ReachOK || r.Card.Status != http.StatusOK || r.Health != nil {
			t.Fatalf("%s: %+v (card %+v)", r.URL, r, r.Card)
		}
		if len(r.DNS.Addresses) != 1 || r.DNS.Addresses[0] != "127.0.0.1" || r.Certificate.Issuer != "Test Root" {
			t.Errorf("%s: dns %+v, certificate %+v", r.URL, r.DNS, r.Certificate)
		}
	}
	if d := *got[0].Certificate.DaysLeft; d != 60 {
		t.Errorf("days left: %d", d)
	}
	if s := got[0].DNS.Server; len(s) != 1 || s[0] != "127.0.0.1" {
		t.Errorf("the server's addresses: %v", s)
	}
	if got[0].Kind != ownerapi.ReachAgent || got[0].Agent != "bob" || got[0].URL != "https://bot.example.com" {
		t.Errorf("the domain's result: %+v", got[0])
	}
}

// TestDeploymentOK: the deployment's names are checked with /healthz.
func TestDeploymentOK(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	for _, n := range []string{"sb.example.com", "alt.example.com"} {
		s.add(n, ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), n), healthz())
	}
	c := newChecker(t, s, ca, func(cfg *reach.Config) { cfg.Domains = []string{"sb.example.com", "Alt.Example.com"} })
	targets := c.DeploymentTargets()
	if len(targets) != 2 || targets[0].Name != "sb.example.com" || targets[1].Name != "alt.example.com" {
		t.Fatalf("targets: %+v", targets)
	}
	for _, r := range c.CheckAll(context.Background(), targets) {
		if r.State != ownerapi.ReachOK || r.Kind != ownerapi.ReachDeployment || r.Health == nil || r.Health.State != ownerapi.ReachOK || r.Card != nil {
			t.Fatalf("%s: %+v", r.Name, r)
		}
	}
}

// TestNoTargets: a deployment on plain http, or on an IP address, has no
// public address to check.
func TestNoTargets(t *testing.T) {
	for _, base := range []string{"http://sb.example.com", "https://127.0.0.1", "https://localhost", ""} {
		c := reach.New(reach.Config{PublicURL: base})
		if got := c.AgentTargets(bot); len(got) != 0 {
			t.Errorf("%q: agent targets %+v", base, got)
		}
		if got := c.DeploymentTargets(); len(got) != 0 {
			t.Errorf("%q: deployment targets %+v", base, got)
		}
	}
}

// check checks the agent's domain name, served by s as the test set it.
func check(t *testing.T, c *reach.Checker, name string) ownerapi.Reachability {
	t.Helper()
	g := &switchboard.Agent{Handle: "bob", Domain: name}
	return c.Check(context.Background(), c.AgentTargets(g)[0])
}

// wantProblem fails unless r fails (or warns) with a problem that says
// each of says.
func wantProblem(t *testing.T, r ownerapi.Reachability, state string, says ...string) {
	t.Helper()
	t.Log(r.Problem)
	if r.State != state {
		t.Fatalf("state %q, want %q: %+v", r.State, state, r)
	}
	for _, s := range says {
		if !strings.Contains(r.Problem, s) {
			t.Errorf("the problem %q does not say %q", r.Problem, s)
		}
	}
}

// TestDNSMissing: a name with no address is reported with the record to
// make; nothing else can be checked.
func TestDNSMissing(t *testing.T) {
	acmetest.SetNoAddress(t, "gone.example.com")
	c := newChecker(t, newSite(t), newCA(t, "Test Root"))
	r := check(t, c, "gone.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "no A/AAAA record for gone.example.com: add one pointing at 127.0.0.1", "CNAME to sb.example.com")
	if r.DNS.State != ownerapi.ReachFailing || r.Certificate.State != ownerapi.ReachNotChecked || r.Card.State != ownerapi.ReachNotChecked {
		t.Fatalf("checks: %+v", r)
	}
}

// TestDNSElsewhere: an agent's domain that resolves to an address that is
// not the deployment's is reported with both.
func TestDNSElsewhere(t *testing.T) {
	acmetest.SetA(t, "far.example.com", "127.0.0.2")
	c := newChecker(t, newSite(t), newCA(t, "Test Root"))
	r := check(t, c, "far.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "DNS for far.example.com points at 127.0.0.2, not this server (127.0.0.1)")
	if r.Certificate.State != ownerapi.ReachFailing || !strings.Contains(r.Certificate.Problem, "could not connect to far.example.com") {
		t.Errorf("certificate: %+v", r.Certificate)
	}
}

// TestPrivateAddress: without loopback allowed, a name that resolves to
// it is one peers cannot reach, and is not dialed.
func TestPrivateAddress(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	c := newChecker(t, s, ca, func(cfg *reach.Config) { cfg.Guard = netguard.Options{} })
	r := check(t, c, "bot.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "resolves only to private or special-purpose addresses (127.0.0.1)")
	if s.dials.Load() != 0 || r.Certificate.State != ownerapi.ReachNotChecked {
		t.Fatalf("dialed %d times: %+v", s.dials.Load(), r.Certificate)
	}
}

// TestCertificates: a certificate that expired, one near its end, one
// for another name, one of a CA peers do not trust, and none at all.
func TestCertificates(t *testing.T) {
	ca, other := newCA(t, "Test Root"), newCA(t, "Someone Else")
	s := newSite(t)
	now := time.Now()
	cardOf := func(name string) http.Handler { return card("/.well-known/agent-card.json", "https://"+name) }
	s.add("expired.example.com", ca.issue(t, now.Add(-90*24*time.Hour), now.Add(-24*time.Hour), "expired.example.com"), cardOf("expired.example.com"))
	s.add("ending.example.com", ca.issue(t, now.Add(-88*24*time.Hour), now.Add(2*24*time.Hour+time.Hour), "ending.example.com"), cardOf("ending.example.com"))
	s.add("wrong.example.com", ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "other.example.com"), cardOf("wrong.example.com"))
	s.add("untrusted.example.com", other.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "untrusted.example.com"), cardOf("untrusted.example.com"))
	c := newChecker(t, s, ca)

	r := check(t, c, "expired.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "the certificate for expired.example.com expired on", "switchboard health")
	if *r.Certificate.DaysLeft >= 0 || r.Card.State != ownerapi.ReachNotChecked {
		t.Errorf("expired: %+v, card %+v", r.Certificate, r.Card)
	}
	r = check(t, c, "ending.example.com")
	wantProblem(t, r, ownerapi.ReachWarning, "ends in 2 days", "has not been renewed")
	if r.Certificate.State != ownerapi.ReachWarning || r.Card.State != ownerapi.ReachOK {
		t.Errorf("ending: %+v, card %+v", r.Certificate, r.Card)
	}
	r = check(t, c, "wrong.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "the certificate served for wrong.example.com is for other.example.com")
	r = check(t, c, "untrusted.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "issued by Someone Else", "not trusted")
	r = check(t, c, "nocert.example.com")
	wantProblem(t, r, ownerapi.ReachFailing, "the TLS handshake with nocert.example.com failed", "no certificate for the name")
	if r.Certificate.NotAfter != nil || r.Card.State != ownerapi.ReachNotChecked {
		t.Errorf("no certificate: %+v", r)
	}
}

// TestCardFailing: a name whose server does not serve the card, serves
// another agent's, redirects, or serves no card at all.
func TestCardFailing(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	cert := func(n string) *tls.Certificate { return ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), n) }
	s.add("missing.example.com", cert("missing.example.com"), http.NotFoundHandler())
	s.add("another.example.com", cert("another.example.com"), card("/.well-known/agent-card.json", "https://someone.example.net"))
	s.add("moved.example.com", cert("moved.example.com"), http.RedirectHandler("https://elsewhere.example.net/", http.StatusPermanentRedirect))
	s.add("page.example.com", cert("page.example.com"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>hello</html>")) }))
	c := newChecker(t, s, ca)
	for name, says := range map[string][]string{
		"missing.example.com": {"GET https://missing.example.com/.well-known/agent-card.json answered HTTP 404", "does not serve this agent's card"},
		"another.example.com": {"names https://someone.example.net/, not this agent's address https://another.example.com"},
		"moved.example.com":   {"answered HTTP 308, sending it to https://elsewhere.example.net/"},
		"page.example.com":    {"is not an agent card"},
	} {
		r := check(t, c, name)
		wantProblem(t, r, ownerapi.ReachFailing, says...)
		if r.DNS.State != ownerapi.ReachOK || r.Certificate.State != ownerapi.ReachOK || r.Card.State != ownerapi.ReachFailing {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// TestCached: a result is reused for a minute, then checked again.
func TestCached(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	s.add("bot.example.com", ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "bot.example.com"),
		card("/.well-known/agent-card.json", "https://bot.example.com"))
	clk := &clock{now: now}
	c := newChecker(t, s, ca, func(cfg *reach.Config) { cfg.Now = clk.Now })
	first := check(t, c, "bot.example.com")
	for range 3 {
		if r := check(t, c, "bot.example.com"); !r.CheckedAt.Equal(first.CheckedAt) {
			t.Fatal("checked again within the minute")
		}
	}
	if n := s.dials.Load(); n != 1 {
		t.Fatalf("%d connections for 4 checks in a minute", n)
	}
	clk.add(reach.DefaultTTL)
	if r := check(t, c, "bot.example.com"); r.State != ownerapi.ReachOK || !r.CheckedAt.After(first.CheckedAt) {
		t.Fatalf("after a minute: %+v", r)
	}
	if n := s.dials.Load(); n != 2 {
		t.Fatalf("%d connections after a minute", n)
	}
}

// TestBounded: a server that accepts the connection and never answers
// the handshake costs a check its timeout, no more, and says so.
func TestBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c // held open, silent, until the test ends
		}
	}()
	t.Cleanup(func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	})
	s := &site{port: ln.Addr().(*net.TCPAddr).Port}
	c := newChecker(t, s, newCA(t, "Test Root"), func(cfg *reach.Config) { cfg.Timeout = 300 * time.Millisecond })
	start := time.Now()
	r := check(t, c, "silent.example.com")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the check took %s", took)
	}
	wantProblem(t, r, ownerapi.ReachFailing, "the TLS handshake with silent.example.com on port", "got no answer in time")
}

// TestOneCheckAtATime: callers asking at once for one address share one
// check.
func TestOneCheckAtATime(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	s.add("bot.example.com", ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "bot.example.com"),
		card("/.well-known/agent-card.json", "https://bot.example.com"))
	c := newChecker(t, s, ca)
	target := c.AgentTargets(bot)[0]
	targets := make([]reach.Target, 20)
	for i := range targets {
		targets[i] = target
	}
	for _, r := range c.CheckAll(context.Background(), targets) {
		if r.State != ownerapi.ReachOK {
			t.Fatalf("%+v", r)
		}
	}
	if n := s.dials.Load(); n != 1 {
		t.Fatalf("%d connections for 20 callers at once", n)
	}
}

// TestCallerGivesUp: a caller whose context ends gets a failing result
// at once; the check goes on and its result serves the next caller.
func TestCallerGivesUp(t *testing.T) {
	ca := newCA(t, "Test Root")
	s := newSite(t)
	now := time.Now()
	s.add("bot.example.com", ca.issue(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "bot.example.com"),
		card("/.well-known/agent-card.json", "https://bot.example.com"))
	c := newChecker(t, s, ca)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := c.Check(ctx, c.AgentTargets(bot)[0]); r.State != ownerapi.ReachFailing || !strings.Contains(r.Problem, "did not finish") {
		t.Fatalf("a caller that gave up: %+v", r)
	}
	if r := check(t, c, "bot.example.com"); r.State != ownerapi.ReachOK {
		t.Fatalf("the next caller: %+v", r)
	}
	if n := s.dials.Load(); n != 1 {
		t.Fatalf("%d connections", n)
	}
}
