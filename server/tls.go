package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// Where a server listens when it serves HTTPS and Config says nothing:
// HTTPS on every address's 443, and with ACME plain HTTP on 80, where the
// CA's HTTP-01 challenges come.
const (
	DefaultHTTPSAddr    = ":443"
	DefaultACMEHTTPAddr = ":80"
)

// certSource is where the HTTPS listener's certificates come from: the
// ACME manager (certs.Manager) or the operator's files (certs.FileCert).
type certSource interface {
	TLSConfig() *tls.Config
	Status() map[string]ownerapi.TLSName
	Expiries() []metrics.Sample
	Close() error
}

// servesHTTPS reports whether the configuration turns HTTPS on.
func (cfg *Config) servesHTTPS() bool {
	return len(cfg.ACME.Domains) > 0 || cfg.TLSCertFile != "" || cfg.TLSKeyFile != ""
}

// checkTLS checks the TLS settings before anything is opened
// (certs.Config.Check, the files' flags), and fills what their defaults
// derive from: the domains in their checked form and the public URL
// (https:// and the first domain).
func (cfg *Config) checkTLS() error {
	files := cfg.TLSCertFile != "" || cfg.TLSKeyFile != ""
	if files && len(cfg.ACME.Domains) > 0 {
		return errors.New("--tls-cert/--tls-key and --domain do not go together: give your own certificate, or let switchboard obtain one for --domain, not both")
	}
	if files && (cfg.TLSCertFile == "" || cfg.TLSKeyFile == "") {
		return errors.New("--tls-cert and --tls-key go together: give both the certificate file and its key's")
	}
	if files {
		// The pair is loaded again, for good, once the listeners are open.
		if _, err := certs.LoadFileCert(cfg.TLSCertFile, cfg.TLSKeyFile, 0, slog.New(slog.DiscardHandler)); err != nil {
			return err
		}
	}
	if len(cfg.ACME.Domains) == 0 {
		return nil
	}
	if err := cfg.ACME.Check(); err != nil {
		return err
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "https://" + cfg.ACME.Domains[0]
	}
	return nil
}

// listenHTTPS opens the HTTPS listener, counting each address's
// unauthenticated connections under TLS as the plain listener does.
func (s *Server) listenHTTPS() error {
	addr := s.Config.HTTPSAddr
	if addr == "" {
		addr = DefaultHTTPSAddr
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s (--https-addr): %w", addr, err)
	}
	ln := httpapi.Listen(tcp, httpapi.ListenerConfig{UnauthenticatedPerAddress: s.Config.MaxUnauthConns, Logger: s.Logger, TLS: true})
	s.httpsLn = ln
	s.listeners = append(s.listeners, ln)
	return nil
}

// openCerts makes the HTTPS listener's certificate source, once the
// listeners (whose addresses the ACME challenges come to) are open.
func (s *Server) openCerts() error {
	cfg := s.Config
	if cfg.TLSCertFile != "" {
		fc, err := certs.LoadFileCert(cfg.TLSCertFile, cfg.TLSKeyFile, 0, s.Logger)
		if err != nil {
			return err
		}
		s.certs = fc
	} else {
		m, err := certs.New(cfg.ACME, certs.Deps{
			Store: s.DB, Logger: s.Logger, HTTPAddr: s.ln.Addr(), HTTPSAddr: s.httpsLn.Addr(), AgentDomain: s.agentDomain(),
		})
		if err != nil {
			return err
		}
		s.certs, s.Certs = m, m
	}
	s.metrics.reg.MustRegister(metrics.NewGaugeSetFunc("switchboard_tls_certificate_expiry_seconds",
		"Seconds until the certificate served for each name expires (its NotAfter); negative once it has. Renewal begins about 30 days before (a third of the lifetime).",
		"name", s.certs.Expiries))
	return nil
}

// agentDomain is the on-demand decision's question: does an agent of this
// deployment, of an enabled account, hold the domain name? The store
// answers (its lookups of agents by domain are cached); Config.AgentDomain
// answers instead where a test sets it.
func (s *Server) agentDomain() func(ctx context.Context, name string) (bool, error) {
	if s.Config.AgentDomain != nil {
		return s.Config.AgentDomain
	}
	return func(ctx context.Context, name string) (bool, error) {
		a, err := s.DB.FindAgentByDomain(ctx, name)
		switch {
		case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
			return false, nil
		case err != nil:
			return false, err
		}
		return !a.AccountDisabled, nil
	}
}

// tlsStatusFunc returns what /readyz's tls field reads: nil without
// HTTPS. The faces are built before the certificates' source (which
// needs the listeners open), so it reads the source when asked.
func (s *Server) tlsStatusFunc() func() map[string]ownerapi.TLSName {
	if !s.Config.servesHTTPS() {
		return nil
	}
	return func() map[string]ownerapi.TLSName {
		if s.certs == nil {
			return nil
		}
		return s.certs.Status()
	}
}

// plainHandler is the handler of the plain HTTP listener: with HTTPS, the
// ACME challenges, loopback clients served, and a redirect to https for
// everyone else.
func (s *Server) plainHandler(app http.Handler) http.Handler {
	if s.httpsLn == nil {
		return app
	}
	var challenge func(http.ResponseWriter, *http.Request) bool
	if s.Certs != nil {
		challenge = s.Certs.HandleHTTPChallenge
	}
	_, port, _ := net.SplitHostPort(s.httpsLn.Addr().String())
	n, _ := strconv.Atoi(port)
	return certs.Redirect(app, n, challenge)
}

// serveHTTPS serves the HTTPS listener with the same handler as the plain
// one, Strict-Transport-Security on every response.
func (s *Server) serveHTTPS(app http.Handler) {
	if s.httpsLn == nil {
		return
	}
	s.httpsServer = s.newHTTPServer(certs.HSTS(app))
	s.httpsServer.TLSConfig = s.certs.TLSConfig()
	s.httpsServed = make(chan error, 1)
	ln := s.httpsLn
	go func() { s.httpsServed <- s.httpsServer.ServeTLS(ln, "", "") }()
}

// HTTPSURL returns the base URL of the HTTPS listener, or "" without one.
func (s *Server) HTTPSURL() string {
	if s.httpsLn == nil {
		return ""
	}
	return "https://" + loopbackAddr(s.httpsLn)
}
