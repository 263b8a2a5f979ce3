// Package acmetest runs a real ACME CA for tests, in the test process, on
// loopback: Let's Encrypt's Pebble (its CA, validation authority and web
// front end, from their Go packages) and pebble-challtestsrv's DNS server
// (package challtestsrv), which answers every name with 127.0.0.1 unless a
// test says otherwise. Pebble validates challenges for real: it resolves
// the name with that DNS server and connects to the server under test on
// the ports the test binds it to, HTTP-01 and TLS-ALPN-01. Nothing leaves
// the machine.
package acmetest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/challtestsrv"
	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// CA is one Pebble: a fresh CA, with its own accounts and orders.
type CA struct {
	// DirectoryURL is the ACME directory (serve --acme-ca).
	DirectoryURL string
	// RootFile is a PEM file of the root of the CA's own HTTPS (serve
	// --acme-ca-root).
	RootFile string
	// DNS is the host:port of the test DNS server (serve --dns-resolver).
	DNS string

	blocked []string
	orders  atomic.Int64
	bound   chan struct{} // closed by Bind
	handler http.Handler  // set by Bind
	ca      *ca.CAImpl    // set by Bind
}

// Options configure a CA.
type Options struct {
	// Blocked are names the CA refuses to issue for (rejectedIdentifier).
	Blocked []string
}

// Start starts a CA whose HTTPS front end answers at once; its
// validation authority is made by Bind, once the server under test
// listens (Pebble connects to fixed ports). Requests that come before
// Bind wait for it. It stops when the test ends.
func Start(tb testing.TB, opts Options) *CA {
	tb.Helper()
	c := &CA{DNS: dnsServer(tb), blocked: opts.Blocked, bound: make(chan struct{})}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(c.serve))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	c.DirectoryURL = srv.URL + wfe.DirectoryPath
	c.RootFile = filepath.Join(tb.TempDir(), "pebble-https-root.pem")
	if err := os.WriteFile(c.RootFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return c
}

// Bind makes the CA's validation authority: it validates HTTP-01 on
// httpPort and TLS-ALPN-01 on tlsPort of the address each name resolves
// to.
func (c *CA) Bind(httpPort, tlsPort int) {
	// Pebble reads its knobs from the environment: no random sleep before
	// validating, no nonce refused at random, no authorization reused (so
	// that every order is validated).
	os.Setenv("PEBBLE_VA_NOSLEEP", "1")
	os.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	os.Setenv("PEBBLE_AUTHZREUSE", "0")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	for _, n := range c.blocked {
		_ = store.AddBlockedDomain(n)
	}
	c.ca = ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "test"}})
	v := va.New(logger, httpPort, tlsPort, false, c.DNS, store)
	front := wfe.New(logger, store, v, c.ca, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	c.handler = front.Handler()
	close(c.bound)
}

// serve counts new orders and hands the request to Pebble, once bound.
func (c *CA) serve(w http.ResponseWriter, r *http.Request) {
	select {
	case <-c.bound:
	case <-r.Context().Done():
		return
	case <-time.After(time.Minute):
		http.Error(w, "acmetest: Bind was never called", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
		c.orders.Add(1)
	}
	c.handler.ServeHTTP(w, r)
}

// Orders returns how many new orders (requests for a certificate) the CA
// has had.
func (c *CA) Orders() int { return int(c.orders.Load()) }

// Roots returns the root that issued certificates chain to, to verify
// them.
func (c *CA) Roots() *x509.CertPool {
	<-c.bound
	pool := x509.NewCertPool()
	pool.AddCert(c.ca.GetRootCert(0).Cert)
	return pool
}

// The test DNS server is one per process: challtestsrv answers through
// the dns package's default handler.
var (
	dnsOnce sync.Once
	dnsAddr string
	dnsSrv  *challtestsrv.ChallSrv
	dnsErr  error
)

// dnsServer returns the address of the test DNS server, starting it the
// first time: UDP and TCP on one loopback port, every name 127.0.0.1 (and
// no IPv6) unless SetA says otherwise.
func dnsServer(tb testing.TB) string {
	dnsOnce.Do(func() {
		pc, ln, err := listenBoth()
		if err != nil {
			dnsErr = err
			return
		}
		dnsSrv, dnsErr = challtestsrv.New(challtestsrv.Config{DNSAddrs: []string{pc.LocalAddr().String()}, Log: log.New(io.Discard, "", 0)})
		if dnsErr != nil {
			return
		}
		dnsSrv.SetDefaultDNSIPv4("127.0.0.1")
		dnsSrv.SetDefaultDNSIPv6("")
		go func() { _ = (&dns.Server{PacketConn: pc, Handler: recursive{}}).ActivateAndServe() }()
		go func() { _ = (&dns.Server{Listener: ln, Handler: recursive{}}).ActivateAndServe() }()
		dnsAddr = pc.LocalAddr().String()
	})
	if dnsErr != nil {
		tb.Fatalf("acmetest: DNS server: %v", dnsErr)
	}
	return dnsAddr
}

// recursive answers as challtestsrv does (through the dns package's
// default handler), marking each answer as a recursive resolver's: Go's
// resolver takes an empty answer without that mark, or the authoritative
// one, for a lame referral rather than a name without records.
type recursive struct{}

func (recursive) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	dns.DefaultServeMux.ServeDNS(raWriter{w}, r)
}

// raWriter sets RecursionAvailable on every message it writes.
type raWriter struct{ dns.ResponseWriter }

func (w raWriter) WriteMsg(m *dns.Msg) error {
	m.RecursionAvailable = true
	return w.ResponseWriter.WriteMsg(m)
}

// listenBoth listens for UDP and TCP on one loopback port.
func listenBoth() (net.PacketConn, net.Listener, error) {
	var err error
	for range 20 {
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			return nil, nil, err
		}
		var ln net.Listener
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			return pc, ln, nil
		}
		pc.Close()
	}
	return nil, nil, err
}

// SetA makes the test DNS server answer name with addrs (A records) until
// the test ends, instead of 127.0.0.1.
func SetA(tb testing.TB, name string, addrs ...string) {
	tb.Helper()
	dnsServer(tb)
	dnsSrv.AddDNSARecord(name, addrs)
	tb.Cleanup(func() { dnsSrv.DeleteDNSARecord(name) })
}

// DNS returns the host:port of the test DNS server, starting it if need
// be, for tests that need names resolved and no CA.
func DNS(tb testing.TB) string {
	tb.Helper()
	return dnsServer(tb)
}

// SetNoAddress makes the test DNS server answer name with no A and no
// AAAA record (a name that exists, without an address: the resolver
// reports it not found) until the test ends.
func SetNoAddress(tb testing.TB, name string) {
	tb.Helper()
	dnsServer(tb)
	// A record that is no IPv4 address is left out of the answer, which
	// is then empty; the default answers no name with an IPv6 address.
	dnsSrv.AddDNSARecord(name, []string{"none"})
	tb.Cleanup(func() { dnsSrv.DeleteDNSARecord(name) })
}

// Lookup resolves name with the test DNS server, for tests that check it.
func Lookup(ctx context.Context, tb testing.TB, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dnsServer(tb))
	}}
	return r.LookupHost(ctx, name)
}
