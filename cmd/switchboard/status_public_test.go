package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/server"
)

// runPublicMain starts a deployment at https://sb.test with its own
// certificate for names (from files), on a loopback port its
// reachability checks dial, every name resolved by the test DNS server
// (127.0.0.1 unless a test says otherwise); the certificate's roots are
// the checks'.
func runPublicMain(t *testing.T, names ...string) *server.Server {
	t.Helper()
	certFile, keyFile, roots := writeCertFor(t, 61*24*time.Hour, names...)
	port := freeLoopbackPort(t)
	return MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.PublicURL, c.HTTPSAddr = "https://sb.test", "127.0.0.1:"+strconv.Itoa(port)
		c.TLSCertFile, c.TLSKeyFile = certFile, keyFile
		c.ACME.DNSResolver, c.ReachPort, c.ReachRoots = acmetest.DNS(t), port, roots
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
}

// TestStatusPublic: status of an agent with a domain prints how the world
// reaches its domain and its address on the deployment's name (DNS,
// certificate and days left, card), the same as JSON; for a domain
// without DNS, or without a certificate for it, it says what is wrong,
// and the next step is the fix.
func TestStatusPublic(t *testing.T) {
	m := runPublicMain(t, "sb.test", "bot.example.com")
	cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "bot.example.com")
	out := cli(t, m, "status", "--agent", "bob")
	for _, want := range []string{
		"public       https://bot.example.com — dns ok (127.0.0.1), certificate ok, 60 days left, card ok\n",
		"public       https://sb.test/a/bob — dns ok (127.0.0.1), certificate ok, 60 days left, card ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status did not say %q:\n%s", want, out)
		}
	}
	var s agentStatus
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "status", "--agent", "bob")), &s))
	if len(s.Public) != 2 || s.Public[0].State != ownerapi.ReachOK || s.Public[0].Card == nil || *s.Public[0].Certificate.DaysLeft != 60 ||
		s.Public[1].URL != "https://sb.test/a/bob" || s.Rule == "public address failing" {
		t.Fatalf("status --json: %+v", s)
	}

	acmetest.SetNoAddress(t, "gone.example.com")
	cli(t, m, "agent", "create", "carl", "--mode", "inbox", "--domain", "gone.example.com")
	out = cli(t, m, "status", "--agent", "carl")
	for _, want := range []string{
		"https://gone.example.com — dns failing, certificate not checked, card not checked",
		"failing: no A/AAAA record for gone.example.com: add one pointing at 127.0.0.1, or a CNAME to sb.test",
		"next step: peers cannot reach https://gone.example.com: no A/AAAA record",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status did not say %q:\n%s", want, out)
		}
	}

	cli(t, m, "agent", "create", "dora", "--mode", "inbox", "--domain", "dora.example.com")
	out = cli(t, m, "status", "--agent", "dora")
	if !strings.Contains(out, "https://dora.example.com — dns ok (127.0.0.1), certificate failing, 60 days left, card not checked") ||
		!strings.Contains(out, "the certificate served for dora.example.com is for sb.test, bot.example.com") {
		t.Fatalf("status of a domain without a certificate:\n%s", out)
	}
}

// writeCertFor writes a self-signed certificate for names, valid for
// life from an hour ago, and its key; it returns their files and a pool
// that trusts it.
func writeCertFor(t *testing.T, life time.Duration, names ...string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(life), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	must(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile, roots
}

// freeLoopbackPort returns a loopback TCP port free a moment ago: for a
// listener whose port must be known before the server starts.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
