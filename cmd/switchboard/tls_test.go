package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/server"
)

// TestServeTLSFlagsRefused: serve refuses bad TLS flags before it opens
// anything, saying which: a --domain that is an IP address, a wildcard,
// has a port or a scheme (also in a comma-separated list), --tls-cert
// without --tls-key, both with --domain, files it cannot read.
func TestServeTLSFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--domain", "203.0.113.9"}, "is an IP address"},
		{[]string{"--domain", "agents.example.com,*.example.com"}, "a wildcard names many hosts"},
		{[]string{"--domain", "agents.example.com:443"}, "has a port"},
		{[]string{"--domain", "https://agents.example.com"}, "has a scheme"},
		{[]string{"--tls-cert", filepath.Join(dir, "c.pem")}, "go together"},
		{[]string{"--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "k.pem"), "--domain", "agents.example.com"}, "do not go together"},
		{[]string{"--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "k.pem")}, "--tls-cert"},
	} {
		args := append([]string{"--data", t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--https-addr", "127.0.0.1:0"}, tc.args...)
		err := run(t.Context(), args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %s: %v; want an error that says %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestHealthPrintsTLS: switchboard health prints the state of each
// name's certificate beside the server's readiness.
func TestHealthPrintsTLS(t *testing.T) {
	certFile, keyFile := writeSelfSigned(t, "files.test")
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.HTTPSAddr, c.TLSCertFile, c.TLSKeyFile = "127.0.0.1:0", certFile, keyFile
	})
	out := cli(t, m, "health")
	if !strings.Contains(out, "ok: ready") || !strings.Contains(out, "tls files.test: ok (file), expires ") {
		t.Fatalf("health:\n%s", out)
	}
}

// writeSelfSigned writes a self-signed certificate for name and its key,
// and returns their files.
func writeSelfSigned(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	must(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}
