package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"go.uber.org/zap"
)

// Defaults of a Manager.
const (
	// DefaultCA is the ACME directory certificates are asked from: Let's
	// Encrypt's production CA.
	DefaultCA = certmagic.LetsEncryptProductionCA
	// DefaultOnDemandLimit certificates for agents' domains may be asked
	// for in DefaultOnDemandWindow, by one instance.
	DefaultOnDemandLimit  = 20
	DefaultOnDemandWindow = time.Hour
)

// Config configures automatic certificates. Zero values mean defaults.
type Config struct {
	// Domains are the deployment's own names (--domain), checked by
	// CheckDomains: their certificates are obtained at start and renewed.
	Domains []string
	// Email is the ACME account's contact; empty: an account without one.
	Email string
	// CA is the ACME directory URL (default DefaultCA).
	CA string
	// CARootFile is a PEM file of the roots to trust for the CA's HTTPS
	// (a private or test CA); empty: the system's.
	CARootFile string
	// DNSResolver is the host:port of the DNS server that answers the
	// on-demand decision's lookups; empty: the system's resolver.
	DNSResolver string
	// DisableHTTPChallenge and DisableTLSALPNChallenge turn one of the two
	// challenges off; both are on by default.
	DisableHTTPChallenge, DisableTLSALPNChallenge bool
	// OnDemandLimit new certificates for agents' domains may be asked for
	// per OnDemandWindow (defaults DefaultOnDemandLimit and
	// DefaultOnDemandWindow); past it, a new name's handshake fails.
	OnDemandLimit  int
	OnDemandWindow time.Duration

	// Tuning, for tests: how long a lock outlives its holder and how often
	// a waiter asks again (Storage), how often certificates are checked
	// for renewal (certmagic's default: 10 minutes), how much of its life
	// a certificate is renewed in (certmagic's default: a third), and a
	// lifetime to ask the CA for (zero: the CA's).
	LockTTL, LockPoll  time.Duration
	RenewCheckInterval time.Duration
	RenewalWindowRatio float64
	NotAfter           time.Duration
}

// Deps is what a Manager needs from the server that runs it.
type Deps struct {
	Store  switchboard.CertStore
	Logger *slog.Logger
	// HTTPAddr and HTTPSAddr are the addresses the server's listeners
	// have: the ACME challenges come to them.
	HTTPAddr, HTTPSAddr net.Addr
	// AgentDomain reports whether an agent of the deployment holds the
	// domain name (the on-demand decision); nil: none does.
	AgentDomain func(ctx context.Context, name string) (bool, error)
}

// Manager obtains and renews the certificates HTTPS serves, over ACME:
// the deployment's own names at start, agents' domains on demand. Its
// files live in the server's store (Storage), so that the instances of a
// deployment share them.
type Manager struct {
	cfg     Config
	logger  *slog.Logger
	storage *Storage
	cache   *certmagic.Cache
	// managed serves the deployment's own names; onDemand every other
	// name, each only if the decision allows it. Two configs: one with
	// OnDemand set would manage every name on demand, its own included,
	// and obtain nothing at start.
	managed, onDemand *certmagic.Config
	issuer            *certmagic.ACMEIssuer // the managed config's: it answers HTTP-01 challenges
	decider           *decider
	limiter           *windowLimit
	status            *status
	own               map[string]bool // immutable: the deployment's names

	ctx    context.Context // ends at Close: certmagic's background work
	cancel context.CancelFunc
	closed sync.Once
	err    error // Close's
}

// Check checks cfg and fills its defaults: the domains in their checked
// form (CheckDomains), the CA, the on-demand limit. It fails, naming the
// flag, on no domain, a CA that is not an https URL, a resolver that is
// not HOST:PORT, a CA root file that cannot be read.
func (cfg *Config) Check() error {
	if len(cfg.Domains) == 0 {
		return errors.New("certs: no domain to obtain certificates for")
	}
	domains, err := CheckDomains(cfg.Domains)
	if err != nil {
		return err
	}
	cfg.Domains = domains
	if cfg.CA == "" {
		cfg.CA = DefaultCA
	}
	if u, err := url.Parse(cfg.CA); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--acme-ca: want the https:// URL of an ACME directory, got %q", cfg.CA)
	}
	if cfg.DNSResolver != "" {
		if _, _, err := net.SplitHostPort(cfg.DNSResolver); err != nil {
			return fmt.Errorf("--dns-resolver: want HOST:PORT, got %q", cfg.DNSResolver)
		}
	}
	if cfg.OnDemandLimit <= 0 {
		cfg.OnDemandLimit = DefaultOnDemandLimit
	}
	if cfg.OnDemandWindow <= 0 {
		cfg.OnDemandWindow = DefaultOnDemandWindow
	}
	_, err = readRoots(cfg.CARootFile)
	return err
}

// New returns a Manager; Start begins obtaining. It fails on a bad
// configuration (Check).
func New(cfg Config, deps Deps) (*Manager, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	roots, err := readRoots(cfg.CARootFile)
	if err != nil {
		return nil, err
	}
	logger := deps.Logger.With("component", "certs")
	m := &Manager{cfg: cfg, logger: logger, own: make(map[string]bool)}
	for _, d := range cfg.Domains {
		m.own[d] = true
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.storage = NewStorage(deps.Store, logger, cfg.LockTTL, cfg.LockPoll)
	m.status = newStatus(cfg.Domains)
	zl := zapLogger(deps.Logger.Handler())
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   m.configFor,
		RenewCheckInterval: cfg.RenewCheckInterval,
		Logger:             zl,
	})
	template := certmagic.Config{
		Storage:            m.storage,
		Logger:             zl,
		OnEvent:            m.onEvent,
		RenewalWindowRatio: cfg.RenewalWindowRatio,
		DefaultServerName:  cfg.Domains[0],
	}
	m.managed = certmagic.New(m.cache, template)
	m.issuer = m.newIssuer(m.managed, roots, deps, zl)
	m.managed.Issuers = []certmagic.Issuer{m.issuer}

	m.limiter = newWindowLimit(cfg.OnDemandLimit, cfg.OnDemandWindow)
	onDemand := template
	m.decider = &decider{
		own: m.own, domains: cfg.Domains, agentDomain: deps.AgentDomain, resolver: NewResolver(cfg.DNSResolver),
		limiter: m.limiter, logger: logger, interfaces: interfaceAddrs,
	}
	onDemand.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: m.decider.decide}
	m.onDemand = certmagic.New(m.cache, onDemand)
	odIssuer := m.newIssuer(m.onDemand, roots, deps, zl)
	m.onDemand.Issuers = []certmagic.Issuer{odIssuer}
	m.decider.stored = func(ctx context.Context, name string) bool {
		return m.storage.Exists(ctx, certmagic.StorageKeys.SiteCert(odIssuer.IssuerKey(), name))
	}
	return m, nil
}

// newIssuer returns the ACME issuer of one config. With Let's Encrypt's
// production CA, a retry after a failure is tried on its staging CA first
// (certmagic's TestCA), and on production only once that works: failed
// validations count against production's limits. Its challenge
// solvers are pointed at the server's own listeners: certmagic then finds
// the addresses taken and leaves the challenges to them (the HTTP
// handler, and the TLS config's acme-tls/1), rather than listening on
// ports of its own.
func (m *Manager) newIssuer(cfg *certmagic.Config, roots *x509.CertPool, deps Deps, zl *zap.Logger) *certmagic.ACMEIssuer {
	host, httpPort := hostPort(deps.HTTPAddr)
	_, httpsPort := hostPort(deps.HTTPSAddr)
	return certmagic.NewACMEIssuer(cfg, certmagic.ACMEIssuer{
		CA:                      m.cfg.CA,
		Email:                   m.cfg.Email,
		Agreed:                  true,
		TrustedRoots:            roots,
		DisableHTTPChallenge:    m.cfg.DisableHTTPChallenge,
		DisableTLSALPNChallenge: m.cfg.DisableTLSALPNChallenge,
		ListenHost:              host,
		AltHTTPPort:             httpPort,
		AltTLSALPNPort:          httpsPort,
		NotAfter:                m.cfg.NotAfter,
		Logger:                  zl,
	})
}

// hostPort splits a listener's address; a wildcard host is "".
func hostPort(a net.Addr) (string, int) {
	if a == nil {
		return "", 0
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", 0
	}
	n, _ := strconv.Atoi(port)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = ""
	}
	return host, n
}

// readRoots reads a PEM file of CA roots; "" is none (the system's).
func readRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--acme-ca-root: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--acme-ca-root: %s holds no PEM certificate", file)
	}
	return pool, nil
}

// configFor is the cache's GetConfigForCert: the managed config for a
// certificate of the deployment's names, the on-demand config for an
// agent's domain.
func (m *Manager) configFor(c certmagic.Certificate) (*certmagic.Config, error) {
	for _, n := range c.Names {
		if m.own[normalize(n)] {
			return m.managed, nil
		}
	}
	return m.onDemand, nil
}

// Start begins managing the deployment's names: each certificate is
// loaded from the store, or obtained in the background (retried, with a
// growing pause, until it is had), then renewed before it expires. The
// server keeps serving meanwhile: plain HTTP on loopback, and HTTPS for
// the names it has a certificate for.
func (m *Manager) Start() error {
	return m.managed.ManageAsync(m.ctx, m.cfg.Domains)
}

// TLSConfig returns the TLS configuration of the HTTPS listener: the
// managed config's certificates for the deployment's names (and for a
// handshake without a name), the on-demand config's for any other name,
// and acme-tls/1 for the TLS-ALPN-01 challenge beside h2 and http/1.1.
func (m *Manager) TLSConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: m.getCertificate,
		NextProtos:     []string{"h2", "http/1.1", acmez.ACMETLS1Protocol},
		MinVersion:     tls.VersionTLS12,
	}
}

// getCertificate picks the config that answers a handshake by its name.
func (m *Manager) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := normalize(hello.ServerName)
	if name == "" || m.own[name] {
		return m.managed.GetCertificate(hello)
	}
	return m.onDemand.GetCertificate(hello)
}

// HandleHTTPChallenge answers an ACME HTTP-01 challenge, of this instance
// or of another of the deployment (the challenge is in the store), and
// reports whether r was one.
func (m *Manager) HandleHTTPChallenge(w http.ResponseWriter, r *http.Request) bool {
	return m.issuer.HandleHTTPChallenge(w, r)
}

// RenewNow checks every managed certificate for renewal at once, as the
// background maintenance does every RenewCheckInterval.
func (m *Manager) RenewNow(ctx context.Context) error {
	return m.cache.RenewManagedCertificates(ctx)
}

// Status returns the state of each name's certificate: the deployment's
// names, and the agents' domains this instance has served or tried to.
func (m *Manager) Status() map[string]ownerapi.TLSName {
	return m.status.snapshot(m.leaf)
}

// Expiries returns, per name with a certificate, the seconds until it
// expires, for switchboard_tls_certificate_expiry_seconds.
func (m *Manager) Expiries() []metrics.Sample {
	return expiries(m.status.names(), m.leaf)
}

// leaf returns the certificate served for name, nil if none.
func (m *Manager) leaf(name string) *x509.Certificate {
	var newest *x509.Certificate
	for _, c := range m.cache.AllMatchingCertificates(name) {
		if c.Leaf != nil && (newest == nil || c.Leaf.NotAfter.After(newest.NotAfter)) {
			newest = c.Leaf
		}
	}
	return newest
}

// Close stops the background work (obtaining, renewing), releases the
// locks this instance holds and waits for the store calls in flight:
// after it, the store may be closed. It is safe to call more than once.
func (m *Manager) Close() error {
	m.closed.Do(func() {
		m.cancel()
		m.cache.Stop()
		m.err = m.storage.Close()
	})
	return m.err
}
