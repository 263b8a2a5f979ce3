package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// acmeWait bounds the waits for a certificate: an order, its validation
// and issuance take a second or two, more on a loaded machine under -race.
const acmeWait = 90 * time.Second

// testLogger is the servers' log: nothing, unless SWITCHBOARD_TEST_LOG is
// set (then standard error, at debug).
func testLogger() *slog.Logger {
	if os.Getenv("SWITCHBOARD_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runTLS starts a server of cfg with HTTPS on free loopback ports, its
// certificates from ca, and closes it when the test ends.
func runTLS(t *testing.T, ca *acmetest.CA, cfg server.Config) *server.Server {
	t.Helper()
	cfg.Addr, cfg.HTTPSAddr = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if ca != nil {
		cfg.ACME.CA, cfg.ACME.CARootFile, cfg.ACME.DNSResolver = ca.DirectoryURL, ca.RootFile, ca.DNS
	}
	s := server.New(cfg, testLogger())
	if err := s.Run(context.Background()); err != nil {
		_ = s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// bind binds ca's validation to s's ports.
func bind(ca *acmetest.CA, s *server.Server) {
	ca.Bind(port(s.URL()), port(s.HTTPSURL()))
}

// port returns the port of a base URL.
func port(u string) int {
	_, p, _ := net.SplitHostPort(u[strings.LastIndex(u, "/")+1:])
	n, _ := strconv.Atoi(p)
	return n
}

// handshake connects to s's HTTPS listener asking for name and returns
// the certificate it serves, verified against roots.
func handshake(s *server.Server, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", strings.TrimPrefix(s.HTTPSURL(), "https://"), &tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// waitCert waits until s serves name a certificate that verifies against
// roots, and returns it.
func waitCert(t *testing.T, s *server.Server, name string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	var cert *x509.Certificate
	testwait.Within(t, acmeWait, "a certificate for "+name, func() error {
		var err error
		cert, err = handshake(s, name, roots)
		return err
	})
	return cert
}

// httpsClient returns a client that reaches s's HTTPS listener for any
// name, trusting roots.
func httpsClient(s *server.Server, roots *x509.CertPool) *http.Client {
	addr := strings.TrimPrefix(s.HTTPSURL(), "https://")
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// readyTLS returns /readyz's status and tls field, asked on the plain
// listener from loopback.
func readyTLS(t *testing.T, s *server.Server) (int, ownerapi.Ready) {
	t.Helper()
	resp, err := http.Get(s.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r ownerapi.Ready
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, r
}

// waitObtained waits until /readyz says s has a certificate for name,
// without a handshake that could ask for one on demand: the deployment's
// names are obtained at start.
func waitObtained(t *testing.T, s *server.Server, name string) {
	t.Helper()
	testwait.Within(t, acmeWait, "/readyz to show a certificate for "+name, func() error {
		_, ready := readyTLS(t, s)
		if got := ready.TLS[name]; got.State != ownerapi.TLSOK {
			return fmt.Errorf("%s: %+v", name, got)
		}
		return nil
	})
}

// TestACMEHTTP01 obtains a real certificate from Pebble over HTTP-01
// alone (TLS-ALPN-01 off), at start: the server serves it over HTTPS for
// its domain, an agent's card is fetched over https trusting only Pebble's
// root, every HTTPS response carries HSTS (a year, no includeSubDomains),
// request-derived URLs say https, /readyz and /metrics show the
// certificate, and the CA had one order.
func TestACMEHTTP01(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	s := runTLS(t, ca, server.Config{Metrics: true,
		ACME: certs.Config{Domains: []string{"agents.test"}, DisableTLSALPNChallenge: true}})
	bind(ca, s)
	waitObtained(t, s, "agents.test")
	cert := waitCert(t, s, "agents.test", ca.Roots())
	if cert.DNSNames[0] != "agents.test" {
		t.Fatalf("served a certificate for %v", cert.DNSNames)
	}
	checkServes(t, s, ca, "agents.test")
	if n := ca.Orders(); n != 1 {
		t.Fatalf("the CA had %d orders, want 1", n)
	}
}

// TestACMETLSALPN01 obtains a real certificate from Pebble over
// TLS-ALPN-01 alone (HTTP-01 off): the HTTPS listener answers the
// challenge (acme-tls/1) beside h2 and http/1.1.
func TestACMETLSALPN01(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	s := runTLS(t, ca, server.Config{
		ACME: certs.Config{Domains: []string{"alpn.test"}, DisableHTTPChallenge: true}})
	bind(ca, s)
	waitObtained(t, s, "alpn.test")
	waitCert(t, s, "alpn.test", ca.Roots())
	if n := ca.Orders(); n != 1 {
		t.Fatalf("the CA had %d orders, want 1", n)
	}
	// h2 is negotiated for browsers and load tools alike.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.HTTPSURL(), "https://"), &tls.Config{ServerName: "alpn.test", RootCAs: ca.Roots(), NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
}

// checkServes checks what a server with a certificate for name serves
// over HTTPS: an agent's card with https URLs, HSTS, /readyz with the
// certificate, and the expiry metric.
func checkServes(t *testing.T, s *server.Server, ca *acmetest.CA, name string) {
	t.Helper()
	owner := s.GeneratedOwnerToken
	call(t, s, "POST", "/agents", owner, `{"handle":"bot","mode":"inbox"}`, http.StatusCreated)
	c := httpsClient(s, ca.Roots())
	resp, err := c.Get("https://" + name + "/a/bot/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the card over https: %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Fatalf("Strict-Transport-Security = %q, want max-age=31536000", got)
	}
	if !bytes.Contains(body, []byte(`"https://`+name+`/a/bot`)) {
		t.Fatalf("the card names no https URL of %s: %s", name, body)
	}
	// Plain HTTP from loopback is served as it is, without HSTS.
	plain, err := http.Get(s.URL() + "/a/bot/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	plain.Body.Close()
	if plain.StatusCode != http.StatusOK || plain.Header.Get("Strict-Transport-Security") != "" {
		t.Fatalf("plain HTTP from loopback: %d, HSTS %q", plain.StatusCode, plain.Header.Get("Strict-Transport-Security"))
	}
	status, ready := readyTLS(t, s)
	got := ready.TLS[name]
	if status != http.StatusOK || got.State != ownerapi.TLSOK || got.Expires == nil || got.Source != "acme" {
		t.Fatalf("/readyz: %d %+v", status, ready)
	}
	if s.Config.Metrics {
		resp, err := http.Get(s.URL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(m, []byte(`switchboard_tls_certificate_expiry_seconds{name="`+name+`"} `)) {
			t.Fatalf("/metrics lacks the expiry of %s", name)
		}
	}
}

// TestACMERenewal: a certificate nearing its end is renewed by the
// background maintenance, and the server serves the new one without a
// restart. Pebble issues certificates of one minute here; the server
// renews at nine tenths of their life left, and checks every second.
func TestACMERenewal(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	s := runTLS(t, ca, server.Config{ACME: certs.Config{Domains: []string{"renew.test"},
		NotAfter: time.Minute, RenewalWindowRatio: 0.9, RenewCheckInterval: time.Second}})
	bind(ca, s)
	first := waitCert(t, s, "renew.test", ca.Roots())
	testwait.Within(t, acmeWait, "a renewed certificate", func() error {
		c, err := handshake(s, "renew.test", ca.Roots())
		if err != nil {
			return err
		}
		if c.SerialNumber.Cmp(first.SerialNumber) == 0 {
			return fmt.Errorf("still serving serial %x", first.SerialNumber)
		}
		return nil
	})
	if n := ca.Orders(); n < 2 {
		t.Fatalf("the CA had %d orders, want a second for the renewal", n)
	}
}

// TestACMEOnDemand: an agent's domain gets a certificate at its first
// handshake; a name no agent holds gets none, and the CA is not asked;
// nor is it for an agent's name that does not resolve to the deployment.
func TestACMEOnDemand(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	acmetest.SetA(t, "moved.test", "127.0.0.9")
	agents := map[string]bool{"bot.test": true, "moved.test": true}
	s := runTLS(t, ca, server.Config{ACME: certs.Config{Domains: []string{"base.test"}},
		AgentDomain: func(_ context.Context, name string) (bool, error) { return agents[name], nil }})
	bind(ca, s)
	waitCert(t, s, "base.test", ca.Roots())
	before := ca.Orders()

	cert, err := handshake(s, "bot.test", ca.Roots())
	if err != nil {
		t.Fatalf("the agent's domain: %v", err)
	}
	if cert.DNSNames[0] != "bot.test" || ca.Orders() != before+1 {
		t.Fatalf("served %v after %d orders, want bot.test after one", cert.DNSNames, ca.Orders()-before)
	}
	for _, name := range []string{"unknown.test", "moved.test"} {
		if _, err := handshake(s, name, ca.Roots()); err == nil {
			t.Fatalf("%s got a certificate", name)
		}
	}
	if n := ca.Orders(); n != before+1 {
		t.Fatalf("the CA had %d orders for names it must not be asked for", n-before-1)
	}
	_, ready := readyTLS(t, s)
	if got := ready.TLS["bot.test"]; got.State != ownerapi.TLSOK || got.Source != "on_demand" {
		t.Fatalf("/readyz for the agent's domain: %+v", ready.TLS)
	}
	if _, ok := ready.TLS["unknown.test"]; ok {
		t.Fatalf("/readyz lists a refused name: %+v", ready.TLS)
	}
}

// TestACMEFailureInReady: a domain whose DNS points elsewhere, and one
// the CA refuses, get no certificate; /readyz says so with the cause and
// the fix, and stays 200: a restart would not help, and would run into
// the CA's rate limits.
func TestACMEFailureInReady(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{Blocked: []string{"refused.test"}})
	acmetest.SetA(t, "elsewhere.test", "127.0.0.2")
	s := runTLS(t, ca, server.Config{ACME: certs.Config{Domains: []string{"elsewhere.test", "refused.test"}}})
	bind(ca, s)
	var ready ownerapi.Ready
	testwait.Within(t, acmeWait, "both failures in /readyz", func() error {
		var status int
		status, ready = readyTLS(t, s)
		if status != http.StatusOK {
			return fmt.Errorf("/readyz %d, want 200: %+v", status, ready)
		}
		if ready.TLS["elsewhere.test"].State != ownerapi.TLSFailed || ready.TLS["refused.test"].State != ownerapi.TLSFailed {
			return fmt.Errorf("tls %+v", ready.TLS)
		}
		return nil
	})
	if got := ready.TLS["elsewhere.test"]; got.Reason != ownerapi.TLSReasonUnreachable || !strings.Contains(got.Cause, "127.0.0.2") || !strings.Contains(got.Fix, "DNS") {
		t.Fatalf("elsewhere.test: %+v", got)
	}
	if got := ready.TLS["refused.test"]; got.Reason != ownerapi.TLSReasonRefused || got.Fix == "" {
		t.Fatalf("refused.test: %+v", got)
	}
}

// TestACMECAUnreachable: a CA that does not answer shows as such in
// /readyz, which stays 200.
func TestACMECAUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	s := runTLS(t, nil, server.Config{ACME: certs.Config{Domains: []string{"down.test"}, CA: "https://" + closed + "/dir"}})
	testwait.Within(t, acmeWait, "the failure in /readyz", func() error {
		status, ready := readyTLS(t, s)
		got := ready.TLS["down.test"]
		if status != http.StatusOK || got.State != ownerapi.TLSFailed || got.Reason != ownerapi.TLSReasonCAUnreachable || !strings.Contains(got.Cause, closed) {
			return fmt.Errorf("/readyz %d %+v", status, ready.TLS)
		}
		return nil
	})
}

// TestTLSConfigRefused: bad TLS settings stop the start with an error
// that says what is wrong, before anything is opened.
func TestTLSConfigRefused(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		cfg  server.Config
		want string
	}{
		"IP":           {server.Config{ACME: certs.Config{Domains: []string{"203.0.113.7"}}}, "is an IP address"},
		"IPv6":         {server.Config{ACME: certs.Config{Domains: []string{"[2001:db8::1]"}}}, "is an IP address"},
		"Wildcard":     {server.Config{ACME: certs.Config{Domains: []string{"*.example.com"}}}, "a wildcard"},
		"Port":         {server.Config{ACME: certs.Config{Domains: []string{"example.com:8443"}}}, "has a port"},
		"Scheme":       {server.Config{ACME: certs.Config{Domains: []string{"https://example.com"}}}, "has a scheme"},
		"OneLabel":     {server.Config{ACME: certs.Config{Domains: []string{"localhost"}}}, "single-label"},
		"CertNoKey":    {server.Config{TLSCertFile: dir + "/cert.pem"}, "go together"},
		"KeyNoCert":    {server.Config{TLSKeyFile: dir + "/key.pem"}, "go together"},
		"BothWays":     {server.Config{TLSCertFile: dir + "/cert.pem", TLSKeyFile: dir + "/key.pem", ACME: certs.Config{Domains: []string{"example.com"}}}, "do not go together"},
		"Unreadable":   {server.Config{TLSCertFile: dir + "/none.pem", TLSKeyFile: dir + "/none.key"}, "--tls-cert"},
		"CARootAbsent": {server.Config{ACME: certs.Config{Domains: []string{"example.com"}, CARootFile: dir + "/none.pem"}}, "--acme-ca-root"},
		"CANotHTTPS":   {server.Config{ACME: certs.Config{Domains: []string{"example.com"}, CA: "http://ca.example/dir"}}, "--acme-ca"},
		"BadResolver":  {server.Config{ACME: certs.Config{Domains: []string{"example.com"}, DNSResolver: "10.0.0.53"}}, "--dns-resolver"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Addr, tc.cfg.HTTPSAddr, tc.cfg.DataDir = "127.0.0.1:0", "127.0.0.1:0", filepath.Join(t.TempDir(), "data")
			s := server.New(tc.cfg, testLogger())
			err := s.Run(context.Background())
			_ = s.Close()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error that says %q", err, tc.want)
			}
			if _, err := os.Stat(tc.cfg.DataDir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused start made its data directory: %v", err)
			}
		})
	}
}

// TestACMETwoInstancesOnePostgres: two instances on one PostgreSQL
// database serve the same certificate, which the CA issued once: one
// instance asks while the other waits for the lock in the store, then
// finds the certificate there (its key sealed with the keys both have).
// Pebble validates on the first instance's ports; when the second wins
// the lock, the first answers its challenge (certmagic keeps challenges in
// the store for that, but in one process also in memory, which it reads
// first: this test does not show the store's path for challenges).
func TestACMETwoInstancesOnePostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	ca := acmetest.Start(t, acmetest.Options{})
	cfg := server.Config{Database: dsn, SecretKey: seal.FormatKeys([][]byte{seal.NewKey()}),
		ACME: certs.Config{Domains: []string{"shared.test"}}}
	a, b := runTLS(t, ca, cfg), runTLS(t, ca, cfg)
	bind(ca, a)
	ca1, cb := waitCert(t, a, "shared.test", ca.Roots()), waitCert(t, b, "shared.test", ca.Roots())
	if ca1.SerialNumber.Cmp(cb.SerialNumber) != 0 {
		t.Fatalf("the instances serve serials %x and %x", ca1.SerialNumber, cb.SerialNumber)
	}
	if n := ca.Orders(); n != 1 {
		t.Fatalf("the CA had %d orders, want 1", n)
	}
}

// TestTLSFilesReload: serve --tls-cert/--tls-key serves the operator's
// pair over HTTPS (with HSTS, and cards whose URLs say https), takes a new pair written over the files
// without a restart, and keeps serving that one when a bad pair is
// written next, saying so in /readyz (200).
func TestTLSFilesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first, second := selfSigned(t, "files.test"), selfSigned(t, "files.test")
	first.write(t, certFile, keyFile)
	s := runTLS(t, nil, server.Config{TLSCertFile: certFile, TLSKeyFile: keyFile})
	roots := x509.NewCertPool()
	roots.AddCert(first.cert)
	roots.AddCert(second.cert)
	if c, err := handshake(s, "files.test", roots); err != nil || !c.Equal(first.cert) {
		t.Fatalf("the first pair: %v", err)
	}
	// Without --public-url, the URLs a request makes say https, from the
	// request's TLS.
	call(t, s, "POST", "/agents", s.GeneratedOwnerToken, `{"handle":"bot","mode":"inbox"}`, http.StatusCreated)
	resp, err := httpsClient(s, roots).Get("https://files.test/a/bot/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Strict-Transport-Security") != certs.HSTSValue {
		t.Fatalf("HSTS %q", resp.Header.Get("Strict-Transport-Security"))
	}
	if !bytes.Contains(card, []byte(`"https://files.test/a/bot`)) {
		t.Fatalf("the card over https names no https URL: %s", card)
	}

	second.write(t, certFile, keyFile)
	testwait.ForErr(t, "the second pair served", func() error {
		c, err := handshake(s, "files.test", roots)
		if err == nil && !c.Equal(second.cert) {
			err = errors.New("still the first pair")
		}
		return err
	})

	// A certificate with another's key: kept out, the second pair served.
	third := selfSigned(t, "files.test")
	third.key = first.key
	third.write(t, certFile, keyFile)
	testwait.ForErr(t, "the bad pair in /readyz", func() error {
		status, ready := readyTLS(t, s)
		got := ready.TLS["files.test"]
		if status != http.StatusOK || got.State != ownerapi.TLSOK || got.Reason != ownerapi.TLSReasonFiles || got.Source != "file" {
			return fmt.Errorf("/readyz %d %+v", status, ready.TLS)
		}
		return nil
	})
	if c, err := handshake(s, "files.test", roots); err != nil || !c.Equal(second.cert) {
		t.Fatalf("after a bad pair: %v", err)
	}
}

// pair is a certificate and its key.
type pair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// selfSigned makes a self-signed certificate for name, valid a day.
func selfSigned(t *testing.T, name string) *pair { return selfSignedTB(t, name) }

// selfSignedTB is selfSigned for tests and benchmarks.
func selfSignedTB(t testing.TB, name string) *pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &pair{cert: cert, key: key}
}

// runSelfSigned starts a server of cfg with an HTTPS listener on a free
// loopback port, serving a self-signed certificate for name from files,
// and returns it with a pool that trusts the certificate. The server is
// closed when tb ends.
func runSelfSigned(tb testing.TB, name string, cfg server.Config) (*server.Server, *x509.CertPool) {
	tb.Helper()
	dir := tb.TempDir()
	p := selfSignedTB(tb, name)
	cfg.TLSCertFile, cfg.TLSKeyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	p.writeTB(tb, cfg.TLSCertFile, cfg.TLSKeyFile)
	cfg.Addr, cfg.HTTPSAddr = "127.0.0.1:0", "127.0.0.1:0"
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	s := server.New(cfg, testLogger())
	if err := s.Run(context.Background()); err != nil {
		_ = s.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	roots := x509.NewCertPool()
	roots.AddCert(p.cert)
	return s, roots
}

// write writes the pair over the two files, each replaced at once (a new
// file renamed over the old one).
func (p *pair) write(t *testing.T, certFile, keyFile string) { p.writeTB(t, certFile, keyFile) }

// writeTB is write for tests and benchmarks.
func (p *pair) writeTB(t testing.TB, certFile, keyFile string) {
	t.Helper()
	keyDER, err := x509.MarshalECPrivateKey(p.key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		certFile: {Type: "CERTIFICATE", Bytes: p.cert.Raw},
		keyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		tmp := file + ".new"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHTTPSUnauthenticatedConnections: the bound on an address's
// connections that presented no valid token counts HTTPS connections
// under TLS, as it counts plain ones: one past it is closed before the
// handshake; a request with a valid token over TLS frees its connection's
// place.
func TestHTTPSUnauthenticatedConnections(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	p := selfSigned(t, "files.test")
	p.write(t, certFile, keyFile)
	s := runTLS(t, nil, server.Config{TLSCertFile: certFile, TLSKeyFile: keyFile, MaxUnauthConns: 2})
	roots := x509.NewCertPool()
	roots.AddCert(p.cert)
	dial := func() (*tls.Conn, error) {
		c, err := tls.Dial("tcp", strings.TrimPrefix(s.HTTPSURL(), "https://"), &tls.Config{ServerName: "files.test", RootCAs: roots, NextProtos: []string{"http/1.1"}})
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}
	var open []*tls.Conn
	for range 2 {
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	if _, err := dial(); err == nil {
		t.Fatal("a third unauthenticated connection got through the handshake")
	}
	// The first connection presents the operator's token over TLS.
	if _, err := fmt.Fprintf(open[0], "GET /agents HTTP/1.1\r\nHost: files.test\r\nAuthorization: Bearer %s\r\n\r\n", s.GeneratedOwnerToken); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(open[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /agents over TLS: %s", resp.Status)
	}
	if _, err := dial(); err != nil {
		t.Fatalf("refused although a connection authenticated: %v", err)
	}
}

// TestACMEAgentDomainFromStore: the on-demand decision asks the store. A
// domain an owner gave an agent (PATCH /agents/{ref}) gets a certificate
// at its first handshake; once the agent's account is disabled, a new
// name of it gets none, and the CA is not asked.
func TestACMEAgentDomainFromStore(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	s := runTLS(t, ca, server.Config{ACME: certs.Config{Domains: []string{"base.test"}}})
	bind(ca, s)
	waitCert(t, s, "base.test", ca.Roots())
	op := s.GeneratedOwnerToken
	acct := call(t, s, "POST", "/accounts", op, `{"name":"acme"}`, http.StatusCreated)
	owner := acct["token"].(string)
	call(t, s, "POST", "/agents", owner, `{"handle":"bot","mode":"inbox"}`, http.StatusCreated)
	call(t, s, "PATCH", "/agents/bot", owner, `{"domain":"bot.test"}`, http.StatusOK)
	before := ca.Orders()
	cert, err := handshake(s, "bot.test", ca.Roots())
	if err != nil || cert.DNSNames[0] != "bot.test" {
		t.Fatalf("the agent's domain from the store: %v %v", cert, err)
	}
	if ca.Orders() != before+1 {
		t.Fatalf("%d orders for the agent's domain, want 1", ca.Orders()-before)
	}

	call(t, s, "POST", "/agents", owner, `{"handle":"other","mode":"inbox"}`, http.StatusCreated)
	call(t, s, "PATCH", "/agents/other", owner, `{"domain":"other.test"}`, http.StatusOK)
	call(t, s, "PATCH", "/accounts/"+acct["id"].(string), op, `{"disabled":true}`, http.StatusOK)
	before = ca.Orders()
	if _, err := handshake(s, "other.test", ca.Roots()); err == nil {
		t.Fatal("an agent of a disabled account got a certificate for its domain")
	}
	if ca.Orders() != before {
		t.Fatalf("the CA was asked %d times for a disabled account's domain", ca.Orders()-before)
	}
}
