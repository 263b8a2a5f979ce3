package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeMachine is what deploy touches of a machine, recorded: systemctl's
// answers and calls, the DNS, the interfaces.
type fakeMachine struct {
	active  bool     // the service runs
	calls   []string // systemctl calls, but --version and is-active
	dns     map[string][]netip.Addr
	local   []netip.Addr
	busy    map[string]bool // addresses another server holds
	euid    int
	noSysd  bool
	healthy *httptest.Server // answers the public /readyz, when set
	exe     string           // the binary's path, when not the test's
}

func (f *fakeMachine) deployer(t *testing.T, root string, cmd *DeployCmd) (*deployer, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	// A binary that exists, as systemd-analyze checks, outside the places
	// the unit hides (the test binary is in /tmp).
	exe := "/usr/bin/true"
	if f.exe != "" {
		exe = f.exe
	}
	d := &deployer{cmd: cmd, out: &out, root: root, exe: exe, euid: f.euid, wait: 5 * time.Second,
		systemctl: func(_ context.Context, args ...string) ([]byte, error) {
			switch {
			case f.noSysd:
				return nil, errors.New("exec: \"systemctl\": executable file not found in $PATH")
			case args[0] == "--version":
				return []byte("systemd 252\n"), nil
			case args[0] == "is-active":
				if f.active {
					return []byte("active\n"), nil
				}
				return []byte("inactive\n"), errors.New("exit status 3")
			}
			f.calls = append(f.calls, strings.Join(args, " "))
			if args[0] == "enable" || args[0] == "restart" {
				f.active = true
			}
			return nil, nil
		},
		lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a := f.dns[host]; len(a) > 0 {
				return a, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		localAddrs: func() ([]netip.Addr, error) { return f.local, nil },
		listen: func(addr string) (net.Listener, error) {
			if f.busy[addr] {
				return nil, errors.New("bind: address already in use")
			}
			return net.Listen("tcp", "127.0.0.1:0")
		},
	}
	// No request leaves the machine: without a healthy server, nothing
	// answers the domain.
	d.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("connect: connection refused")
		},
	}}
	if f.healthy != nil {
		pool := f.healthy.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		addr := f.healthy.Listener.Addr().String()
		d.client.Transport = &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		}
	}
	return d, &out
}

func newFake() *fakeMachine {
	pub := netip.MustParseAddr("203.0.113.5")
	return &fakeMachine{euid: 0, dns: map[string][]netip.Addr{"example.com": {pub}}, local: []netip.Addr{pub}, busy: map[string]bool{}}
}

// TestDeployDryRun: a dry run prints the checks, the unit and the steps,
// and writes nothing; the unit passes systemd-analyze verify.
func TestDeployDryRun(t *testing.T) {
	root := t.TempDir()
	f := newFake()
	d, out := f.deployer(t, root, &DeployCmd{Domain: []string{"Example.COM"}, ACMEEmail: "me@example.com", Addr: ":80", HTTPSAddr: ":443",
		DryRun: true, Serve: []string{"--require-approval"}})
	if err := d.run(context.Background()); err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	for _, want := range []string{"dry run: nothing is changed", "ok     running as root", "example.com resolves to 203.0.113.5, an address of this machine",
		"--addr :80 is free", "--https-addr :443 is free", "switchboard.service: new",
		"serve --domain example.com --addr :80 --https-addr :443 --acme-email me@example.com --require-approval",
		"systemctl enable --now switchboard.service", "wait up to 5s for https://example.com/readyz"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dry run lacks %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("a dry run wrote %v", entries)
	}
	if len(f.calls) != 0 {
		t.Fatalf("a dry run ran systemctl %v", f.calls)
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	var unit strings.Builder
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "    ") {
			unit.WriteString(strings.TrimPrefix(line, "    "))
		}
	}
	path := filepath.Join(t.TempDir(), "switchboard.service")
	must(t, os.WriteFile(path, []byte(unit.String()), 0o644))
	if got, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput(); err != nil || strings.Contains(string(got), "switchboard.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, got, unit.String())
	}
}

// TestDeployChecksFail: each check that fails is named, with its fix,
// and nothing is written, in a dry run or not.
func TestDeployChecksFail(t *testing.T) {
	for name, tc := range map[string]struct {
		tweak func(*fakeMachine)
		want  string
	}{
		"NotRoot":      {func(f *fakeMachine) { f.euid = 1000 }, "not running as root"},
		"NoSystemd":    {func(f *fakeMachine) { f.noSysd = true }, "systemd does not run this machine"},
		"NoDNS":        {func(f *fakeMachine) { f.dns = nil }, "example.com does not resolve"},
		"DNSElsewhere": {func(f *fakeMachine) { f.local = []netip.Addr{netip.MustParseAddr("192.0.2.7")} }, "which is not an address of this machine"},
		"PortBusy":     {func(f *fakeMachine) { f.busy[":443"] = true }, "--https-addr :443 cannot be listened on"},
		"BinaryInHome": {func(f *fakeMachine) { f.exe = "/home/me/Downloads/switchboard" }, "install it first"},
	} {
		for _, dry := range []bool{true, false} {
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				f := newFake()
				tc.tweak(f)
				d, out := f.deployer(t, root, &DeployCmd{Domain: []string{"example.com"}, Addr: ":80", HTTPSAddr: ":443", DryRun: dry})
				err := d.run(context.Background())
				if err == nil || !strings.Contains(out.String(), "FAILED "+"") || !strings.Contains(out.String(), tc.want) {
					t.Fatalf("got %v, want a failed check %q:\n%s", err, tc.want, out)
				}
				if entries, _ := os.ReadDir(root); len(entries) != 0 || len(f.calls) != 0 {
					t.Fatalf("a failed check changed the machine: %v, %v", entries, f.calls)
				}
			})
		}
	}
}

// TestDeployBadDomain: a domain that is an IP address, a wildcard, or has
// a port or a scheme is refused with a message that says which.
func TestDeployBadDomain(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.5":                    "is an IP address",
		"[2001:db8::1]":                  "is an IP address",
		"*.example.com":                  "a wildcard",
		"example.com:8443":               "has a port",
		"https://example.com":            "has a scheme",
		"localhost":                      "single-label",
		"bad_name.example.com":           "not a valid DNS name",
		"-lead.example.com":              "not a valid DNS name",
		"example.com/agents":             "without a path",
		strings.Repeat("a", 64) + ".com": "not a valid DNS name",
	} {
		d, out := newFake().deployer(t, t.TempDir(), &DeployCmd{Domain: []string{in}, Addr: ":80", HTTPSAddr: ":443", DryRun: true})
		if err := d.run(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--domain %q: got %v, want %q\n%s", in, err, want, out)
		}
	}
}

// TestDeployTwice: the first run writes the unit and the environment
// file, starts the service and waits for the public URL; the second
// changes nothing and says so.
func TestDeployTwice(t *testing.T) {
	ready := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(ready.Close)
	root := t.TempDir()
	f := newFake()
	f.healthy = ready
	d, out := f.deployer(t, root, &DeployCmd{Domain: []string{"example.com"}, Addr: ":80", HTTPSAddr: ":443"})
	if err := d.run(context.Background()); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	if got, want := strings.Join(f.calls, "; "), "daemon-reload; enable --now switchboard.service"; got != want {
		t.Fatalf("systemctl: %q, want %q", got, want)
	}
	unit := filepath.Join(root, "etc", "systemd", "system", "switchboard.service")
	env := filepath.Join(root, "etc", "switchboard", "serve.env")
	if fi, err := os.Stat(env); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the environment file: %v %v", fi, err)
	}
	if _, err := os.Stat(unit); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"https://example.com is up", "sudo cat /var/lib/switchboard/owner-token", "init NAME"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the first run lacks %q:\n%s", want, out)
		}
	}

	f.calls = nil
	f.busy[":80"], f.busy[":443"] = true, true // the service holds them now
	d, out = f.deployer(t, root, &DeployCmd{Domain: []string{"example.com"}, Addr: ":80", HTTPSAddr: ":443"})
	if err := d.run(context.Background()); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if len(f.calls) != 0 || !strings.Contains(out.String(), "nothing to change") || !strings.Contains(out.String(), "nothing was changed") {
		t.Fatalf("the second run changed something (%v):\n%s", f.calls, out)
	}

	// A changed flag rewrites the unit and restarts the service.
	d, out = f.deployer(t, root, &DeployCmd{Domain: []string{"example.com"}, ACMEEmail: "ops@example.com", Addr: ":80", HTTPSAddr: ":443"})
	if err := d.run(context.Background()); err != nil {
		t.Fatalf("third run: %v\n%s", err, out)
	}
	if got, want := strings.Join(f.calls, "; "), "daemon-reload; restart switchboard.service"; got != want {
		t.Fatalf("systemctl after a change: %q, want %q", got, want)
	}
}
