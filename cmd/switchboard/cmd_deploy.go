package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/internal/atomicfile"
	"github.com/switchboard-dev/switchboard/server"
)

// DeployCmd makes this Linux machine a public deployment in one command:
// it checks the domain and the ports, installs the hardened systemd unit
// of serve --domain (the same unit serve --install writes), starts it,
// and waits until the public URL answers over HTTPS with a valid
// certificate. Run again, it changes nothing that is already right.
type DeployCmd struct {
	Domain      []string      `name:"domain" required:"" sep:"," placeholder:"NAME[,NAME…]" help:"The deployment's public name(s): DNS must already point them at this machine. The first is its public URL, https://NAME."`
	ACMEEmail   string        `name:"acme-email" placeholder:"EMAIL" help:"The address the certificate authority writes to about the certificates (expiry, revocation)."`
	Addr        string        `name:"addr" default:":80" help:"Where the server answers plain HTTP (ACME challenges, and a 308 to https for everything else)."`
	HTTPSAddr   string        `name:"https-addr" default:":443" help:"Where the server serves HTTPS."`
	ACMECA      string        `name:"acme-ca" placeholder:"URL" help:"The ACME directory of the certificate authority (default: Let's Encrypt's production one)."`
	ACMECARoot  string        `name:"acme-ca-root" placeholder:"FILE" help:"PEM roots to trust for --acme-ca (a staging or private CA)."`
	DNSResolver string        `name:"dns-resolver" placeholder:"HOST:PORT" help:"The DNS server to check the domain with (default: the system's)."`
	Wait        time.Duration `name:"wait" default:"5m" help:"How long to wait for the public URL to answer over HTTPS once the server runs."`
	DryRun      bool          `name:"dry-run" help:"Print every step, the unit and what the checks find, and change nothing."`
	Serve       []string      `arg:"" optional:"" passthrough:"" name:"serve-flags" help:"More serve flags for the unit, after -- (for example -- --require-approval --retention 30d). Secrets go in /etc/switchboard/serve.env, never here."`
}

// serveUnit is the unit's name under systemd.
const serveUnit = serveUnitName

// deployer is one run of deploy, with what it touches of the machine
// replaceable in tests.
type deployer struct {
	cmd  *DeployCmd
	out  io.Writer
	root string // where /etc is (systemRoot)
	exe  string // the switchboard binary the unit runs

	euid       int
	systemctl  func(ctx context.Context, args ...string) ([]byte, error)
	lookup     func(ctx context.Context, host string) ([]netip.Addr, error)
	localAddrs func() ([]netip.Addr, error)
	listen     func(addr string) (net.Listener, error)
	client     *http.Client // the probe through the domain and the wait for it
	wait       time.Duration

	failed bool // a check failed
}

// Run deploys.
func (c *DeployCmd) Run(ctx context.Context, cli *CLI) error {
	exe, err := executable()
	if err != nil {
		return err
	}
	d := &deployer{cmd: c, out: cli.out, root: systemRoot, exe: exe, euid: os.Geteuid(),
		systemctl: runSystemctl, localAddrs: interfaceAddrs, listen: func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) },
		wait: c.Wait}
	resolver := certs.NewResolver(c.DNSResolver)
	d.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return resolver.LookupNetIP(ctx, "ip", host)
	}
	d.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, Resolver: resolver}).DialContext,
		// The check that the certificate is valid is the point of the
		// wait: the system's roots, as any peer has.
	}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return d.run(ctx)
}

// run checks, then installs, starts and waits, or in a dry run says what
// it would do.
func (d *deployer) run(ctx context.Context) error {
	c := d.cmd
	domains, err := certs.CheckDomains(c.Domain)
	if err != nil {
		return err
	}
	c.Domain = domains
	for _, a := range c.Serve {
		if a == "--install" || a == "--print-unit" || strings.HasPrefix(a, "--domain") {
			return fmt.Errorf("%s is deploy's to set, not one of the serve flags after --", a)
		}
	}
	unitArgs, err := serveUnitArgs(append([]string{"serve"}, d.unitArgs()...))
	if err != nil {
		return err
	}
	unit := serveUnitText(d.exe, unitArgs)
	unitPath := filepath.Join(d.root, "etc", "systemd", "system", serveUnit)
	envPath := filepath.Join(d.root, serveEnvFile)
	public := "https://" + c.Domain[0]

	if c.DryRun {
		fmt.Fprintf(d.out, "deploy %s (dry run: nothing is changed)\n\nchecks\n", public)
	} else {
		fmt.Fprintf(d.out, "deploy %s\n\nchecks\n", public)
	}
	running := d.checkMachine(ctx)
	d.checkDNS(ctx, running)
	if !running {
		d.checkPort("--addr", c.Addr)
		d.checkPort("--https-addr", c.HTTPSAddr)
	} else {
		d.say("ok", "%s runs: ports %s and %s are its own", serveUnit, c.Addr, c.HTTPSAddr)
	}

	old, err := os.ReadFile(unitPath)
	state := "new"
	switch {
	case err == nil && bytes.Equal(old, []byte(unit)):
		state = "unchanged"
	case err == nil:
		state = "changed"
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("read %s: %w", unitPath, err)
	}
	fmt.Fprintf(d.out, "\nunit %s: %s\n", unitPath, state)
	steps := d.steps(state, running, unitPath, envPath)
	if c.DryRun {
		fmt.Fprintf(d.out, "\n%s\nsteps\n", indent(unit))
		for _, s := range steps {
			fmt.Fprintf(d.out, "  %s\n", s.say)
		}
		fmt.Fprintf(d.out, "  wait up to %s for %s/readyz to answer over HTTPS with a valid certificate\n", d.wait, public)
		if d.failed {
			return errors.New("a check failed: deploy would stop there")
		}
		return nil
	}
	if d.failed {
		return errors.New("a check failed: nothing was changed")
	}
	if len(steps) == 0 {
		fmt.Fprintf(d.out, "\nnothing to change\n")
	} else {
		fmt.Fprintf(d.out, "\nsteps\n")
	}
	for _, s := range steps {
		fmt.Fprintf(d.out, "  %s\n", s.say)
		if err := s.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.say, err)
		}
	}
	if err := d.waitPublic(ctx, public); err != nil {
		return err
	}
	d.summary(public, len(steps) == 0)
	return nil
}

// unitArgs are the serve flags the unit runs with.
func (d *deployer) unitArgs() []string {
	c := d.cmd
	args := []string{"--domain", strings.Join(c.Domain, ","), "--addr", c.Addr, "--https-addr", c.HTTPSAddr}
	for _, f := range []struct{ name, value string }{
		{"--acme-email", c.ACMEEmail}, {"--acme-ca", c.ACMECA}, {"--acme-ca-root", c.ACMECARoot}, {"--dns-resolver", c.DNSResolver},
	} {
		if f.value != "" {
			args = append(args, f.name, f.value)
		}
	}
	return append(args, c.Serve...)
}

// deployStep is one change deploy makes.
type deployStep struct {
	say string
	do  func(ctx context.Context) error
}

// steps are the changes a run makes, given the unit's state and whether
// the service runs.
func (d *deployer) steps(state string, running bool, unitPath, envPath string) []deployStep {
	var steps []deployStep
	if _, err := os.Stat(envPath); errors.Is(err, os.ErrNotExist) {
		steps = append(steps, deployStep{"write " + envPath + " (mode 0600, for secrets)", func(context.Context) error {
			return atomicfile.Write(envPath, []byte("# Secrets of switchboard.service, as NAME=value lines. Keep this file mode 0600.\n"), 0o600, 0o700)
		}})
	}
	if state != "unchanged" {
		unitArgs, _ := serveUnitArgs(append([]string{"serve"}, d.unitArgs()...))
		unit := serveUnitText(d.exe, unitArgs)
		steps = append(steps,
			deployStep{"write " + unitPath, func(context.Context) error { return atomicfile.Write(unitPath, []byte(unit), 0o644, 0o755) }},
			deployStep{"systemctl daemon-reload", d.systemctlStep("daemon-reload")})
	}
	switch {
	case !running:
		steps = append(steps, deployStep{"systemctl enable --now " + serveUnit, d.systemctlStep("enable", "--now", serveUnit)})
	case state != "unchanged":
		steps = append(steps, deployStep{"systemctl restart " + serveUnit, d.systemctlStep("restart", serveUnit)})
	}
	return steps
}

func (d *deployer) systemctlStep(args ...string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		out, err := d.systemctl(ctx, args...)
		if err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
}

// checkMachine checks that deploy may do its work here, and reports
// whether the service already runs.
func (d *deployer) checkMachine(ctx context.Context) (running bool) {
	if d.euid == 0 {
		d.say("ok", "running as root")
	} else {
		d.fail("not running as root: deploy writes a systemd unit and its server binds ports 80 and 443: sudo switchboard deploy …")
	}
	// The unit runs this binary with ProtectHome=yes and PrivateTmp=yes:
	// one under /home, /root or /tmp would not be there for it.
	for _, dir := range []string{"/home/", "/root/", "/tmp/", "/var/tmp/", "/run/user/"} {
		if strings.HasPrefix(d.exe, dir) {
			d.fail("%s is where the service cannot see it (its unit hides %s): install it first, sudo install -m 0755 %s /usr/local/bin/switchboard, and run that one",
				d.exe, strings.TrimSuffix(dir, "/"), d.exe)
			break
		}
	}
	if _, err := d.systemctl(ctx, "--version"); err != nil {
		d.fail("systemd does not run this machine (systemctl: %v): run serve --domain under your own supervisor instead (docs/deploying.md)", err)
		return false
	}
	d.say("ok", "systemd runs this machine")
	out, err := d.systemctl(ctx, "is-active", serveUnit)
	return err == nil && strings.TrimSpace(string(out)) == "active"
}

// checkPort checks that addr is free, by listening on it for a moment.
func (d *deployer) checkPort(flag, addr string) {
	ln, err := d.listen(addr)
	if err != nil {
		d.fail("%s %s cannot be listened on (%v): another server holds the port? stop it, or choose another %s", flag, addr, shortErr(err), flag)
		return
	}
	_ = ln.Close()
	d.say("ok", "%s %s is free", flag, addr)
}

// checkDNS checks that each domain resolves to this machine: to an
// address of one of its interfaces, or (behind NAT) to an address whose
// port 80 reaches a probe this run serves for a moment; when the service
// already runs, its public answer below is the proof.
func (d *deployer) checkDNS(ctx context.Context, running bool) {
	local, _ := d.localAddrs()
	for _, name := range d.cmd.Domain {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		addrs, err := d.lookup(lctx, name)
		cancel()
		if err != nil || len(addrs) == 0 {
			d.fail("%s does not resolve (%v): add an A (or AAAA) record for it with this machine's public address, then run deploy again", name, shortErr(err))
			continue
		}
		shown := addrList(addrs)
		if i := slices.IndexFunc(addrs, func(a netip.Addr) bool { return slices.Contains(local, a.Unmap()) }); i >= 0 {
			d.say("ok", "%s resolves to %s, an address of this machine", name, shown)
			continue
		}
		if running {
			d.say("ok", "%s resolves to %s; the running server's public answer checks it below", name, shown)
			continue
		}
		if err := d.probe(ctx, name); err != nil {
			d.fail("%s resolves to %s, which is not an address of this machine, and http://%s/ does not reach it (%v): point the record at this machine's public address, and open port 80 to it", name, shown, name, shortErr(err))
			continue
		}
		d.say("ok", "%s resolves to %s, which reaches this machine (through NAT)", name, shown)
	}
}

// probe serves a random token on --addr for a moment and fetches it
// through the domain.
func (d *deployer) probe(ctx context.Context, name string) error {
	ln, err := d.listen(d.cmd.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s to probe it: %w", d.cmd.Addr, err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/switchboard-deploy/"+token {
			_, _ = io.WriteString(w, token)
			return
		}
		http.NotFound(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(d.cmd.Addr)
	host := name
	if port != "" && port != "80" {
		host = net.JoinHostPort(name, port)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, "GET", "http://"+host+"/.well-known/switchboard-deploy/"+token, nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || string(got) != token {
		return fmt.Errorf("another server answered (%s)", resp.Status)
	}
	return nil
}

// waitPublic waits until the public URL's /readyz answers 200 over HTTPS
// with a certificate the system trusts, saying what stands in the way
// meanwhile (the server's own account of its certificate, read on
// loopback).
func (d *deployer) waitPublic(ctx context.Context, public string) error {
	ctx, cancel := context.WithTimeout(ctx, d.wait)
	defer cancel()
	fmt.Fprintf(d.out, "  wait for %s/readyz over HTTPS (up to %s)\n", public, d.wait)
	var last string
	for {
		err := d.readyOnce(ctx, public)
		if err == nil {
			return nil
		}
		if msg := shortErr(err); msg != last {
			fmt.Fprintf(d.out, "    not yet: %s\n", msg)
			last = msg
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer over HTTPS within %s (last: %s): see journalctl -u %s, and %s", public, d.wait, last, serveUnit,
				"switchboard health on this machine")
		case <-time.After(2 * time.Second):
		}
	}
}

// readyOnce asks the public URL's /readyz once.
func (d *deployer) readyOnce(ctx context.Context, public string) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "GET", public+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %s", resp.Status)
	}
	return nil
}

// summary says where the deployment is and what to do next.
func (d *deployer) summary(public string, unchanged bool) {
	if unchanged {
		fmt.Fprintf(d.out, "\n%s is up; nothing was changed\n", public)
	} else {
		fmt.Fprintf(d.out, "\n%s is up\n", public)
	}
	token := filepath.Join("/var/lib/switchboard", server.OwnerTokenFile)
	fmt.Fprintf(d.out, "\nthe operator's owner token (keep it secret):\n\n  sudo cat %s\n", token)
	fmt.Fprintf(d.out, "\nnext, where your agent runs, give it an address:\n\n  switchboard --server %s --owner-token TOKEN init NAME --inbox\n", public)
	fmt.Fprintf(d.out, "\n(or --exec COMMAND / --forward URL instead of --inbox: switchboard init --help)\n")
}

func (d *deployer) say(state, format string, args ...any) {
	fmt.Fprintf(d.out, "  %-6s %s\n", state, fmt.Sprintf(format, args...))
}

func (d *deployer) fail(format string, args ...any) {
	d.failed = true
	d.say("FAILED", format, args...)
}

// runSystemctl runs systemctl with args.
func runSystemctl(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
}

// interfaceAddrs returns this machine's addresses.
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out, nil
}

// addrList writes addresses for a person.
func addrList(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// shortErr is an error's text, or "no answer" for nil.
func shortErr(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// indent indents text by two spaces.
func indent(text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		b.WriteString("    ")
		b.WriteString(line)
	}
	return b.String()
}
