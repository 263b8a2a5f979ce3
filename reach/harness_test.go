package reach_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/reach"
)

// testCA issues certificates for the tests' TLS server.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	pool *x509.CertPool
}

// newCA returns a CA named name.
func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{key: key, cert: cert, pool: pool}
}

// issue returns a certificate for names, valid from notBefore to notAfter.
func (ca *testCA) issue(t *testing.T, notBefore, notAfter time.Time, names ...string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		DNSNames: names, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// site is a loopback HTTPS server that answers each name with the
// certificate and the pages the test gives it; any other name fails the
// handshake.
type site struct {
	port  int
	dials atomic.Int64 // connections accepted

	mu    sync.Mutex
	certs map[string]*tls.Certificate // guarded by mu
	pages map[string]http.Handler     // guarded by mu: by Host
}

// newSite starts a site on 127.0.0.1.
func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{certs: make(map[string]*tls.Certificate), pages: make(map[string]http.Handler)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: log.New(io.Discard, "", 0), TLSConfig: &tls.Config{GetCertificate: s.certificate},
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.dials.Add(1)
			}
		}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// add serves name with cert and h.
func (s *site) add(name string, cert *tls.Certificate, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.certs[name], s.pages[name] = cert, h
}

func (s *site) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.certs[hello.ServerName]; c != nil {
		return c, nil
	}
	return nil, &net.AddrError{Err: "no certificate", Addr: hello.ServerName}
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.pages[r.Host]
	s.mu.Unlock()
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// card serves an A2A 1.0 card whose interface is address at path.
func card(path, address string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": "Bot", "supportedInterfaces": []map[string]string{{"url": address + "/", "protocolBinding": "JSONRPC"}}})
	})
}

// healthz serves a Switchboard server's /healthz.
func healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true,"status":"ready"}`))
	})
}

// resolver asks the test DNS server.
func resolver(t *testing.T) *net.Resolver {
	dns := acmetest.DNS(t)
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dns)
	}}
}

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newChecker returns a checker of the deployment https://sb.example.com
// (which, as every name the test DNS server does not know, resolves to
// 127.0.0.1) that dials s, trusts ca and may reach loopback.
func newChecker(t *testing.T, s *site, ca *testCA, opts ...func(*reach.Config)) *reach.Checker {
	cfg := reach.Config{PublicURL: "https://sb.example.com", Resolver: resolver(t), Roots: ca.pool, Port: s.port,
		Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	for _, o := range opts {
		o(&cfg)
	}
	return reach.New(cfg)
}
