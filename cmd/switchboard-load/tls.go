package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// With -tls the tool starts its server with a certificate it makes (serve
// --tls-cert/--tls-key, HTTPS on a port of its own) and the peers send
// over https, with keep-alive, trusting that certificate alone. Agents
// and the owner API stay on the plain listener (loopback, which the
// server serves without redirecting): the path measured is the peers'.
// Against -server https://…, -tls-root names the root to trust, or
// -tls-insecure skips the check (loopback only).

// serverTLS is the certificate of a server the tool starts.
type serverTLS struct {
	certFile, keyFile string
	roots             *x509.CertPool
}

// makeServerTLS writes a self-signed ECDSA P-256 certificate for
// 127.0.0.1 and localhost (the key type certmagic obtains by default) in
// dir.
func makeServerTLS(dir string) (*serverTLS, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "switchboard-load"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	st := &serverTLS{certFile: filepath.Join(dir, "tls-cert.pem"), keyFile: filepath.Join(dir, "tls-key.pem"), roots: x509.NewCertPool()}
	if err := os.WriteFile(st.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(st.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	st.roots.AddCert(cert)
	return st, nil
}

// serveArgs returns the serve flags that turn HTTPS on at httpsAddr.
func (st *serverTLS) serveArgs(httpsAddr string) []string {
	return []string{"--https-addr", httpsAddr, "--tls-cert", st.certFile, "--tls-key", st.keyFile}
}

// peersTLS returns the TLS configuration of the peers' client against
// -server: its -tls-root, or no check with -tls-insecure; nil: the
// system's roots.
func peersTLS(cfg *config) (*tls.Config, error) {
	switch {
	case cfg.tlsInsecure:
		return &tls.Config{InsecureSkipVerify: true}, nil //nolint:gosec // -tls-insecure, loopback only (check)
	case cfg.tlsRoot != "":
		b, err := os.ReadFile(cfg.tlsRoot)
		if err != nil {
			return nil, fmt.Errorf("-tls-root: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("-tls-root: %s holds no PEM certificate", cfg.tlsRoot)
		}
		return &tls.Config{RootCAs: pool}, nil
	}
	return nil, nil
}

// checkTLS refuses TLS flags that cannot work.
func (c *config) checkTLS() error {
	switch {
	case c.tls && c.server != "":
		return errors.New("-tls starts a server with a certificate of its own; against -server https://… use -tls-root or -tls-insecure")
	case c.tls && c.scenario != "route" && c.scenario != "inbox":
		return errors.New("-tls is for -scenario route or inbox")
	case (c.tlsRoot != "" || c.tlsInsecure) && c.server == "":
		return errors.New("-tls-root and -tls-insecure are for -server https://…; for a server this tool starts, use -tls")
	case c.tlsInsecure && !loopbackURL(c.server):
		return errors.New("-tls-insecure is for a server on loopback only")
	}
	return nil
}

// loopbackURL reports whether u names a loopback host.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	if p.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(p.Hostname())
	return ip != nil && ip.IsLoopback()
}
