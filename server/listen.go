package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
)

// DefaultAddr is where a server listens when Config.Addr is empty.
const DefaultAddr = "127.0.0.1:8080"

// listen opens the main listener (bounding each address's
// unauthenticated connections), the HTTPS listener if the server serves
// HTTPS, and the metrics listener, if one is set.
func (s *Server) listen() error {
	cfg := s.Config
	addr := cfg.Addr
	if addr == "" {
		addr = DefaultAddr
		if len(cfg.ACME.Domains) > 0 {
			addr = DefaultACMEHTTPAddr
		}
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln := httpapi.Listen(tcp, httpapi.ListenerConfig{UnauthenticatedPerAddress: cfg.MaxUnauthConns, Logger: s.Logger})
	s.ln = ln
	s.listeners = append(s.listeners, ln)
	if cfg.servesHTTPS() {
		if err := s.listenHTTPS(); err != nil {
			return err
		}
	}
	s.metrics.registerListeners(s.listeners)
	if cfg.MetricsAddr != "" {
		if s.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
	}
	return nil
}

// serve starts serving the listeners: the plain one, the HTTPS one with
// the same handler, and the metrics one.
func (s *Server) serve() {
	app := s.handler()
	s.httpServer = s.newHTTPServer(s.plainHandler(app))
	s.served = make(chan error, 1)
	ln := s.ln
	go func() { s.served <- s.httpServer.Serve(ln) }()
	s.serveHTTPS(app)
	s.serveMetrics()
}

// newHTTPServer returns the http.Server of a main listener (plain or
// HTTPS): its protocols, its timeouts, its bounds, and its open streams
// ended at shutdown.
func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelDebug),
		ConnContext:       httpapi.ConnContext,
	}
	// HTTP/2 without TLS (h2c, with prior knowledge) on the plain
	// listener carries the A2A gRPC binding; with TLS, HTTP/2 is
	// negotiated as ever.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.RegisterOnShutdown(s.API.CloseStreams)
	srv.RegisterOnShutdown(s.Console.CloseStreams)
	return srv
}

// serveMetrics serves /metrics, /healthz and /readyz on the metrics
// listener, if there is one. Health answers as on the main listener, so
// that probes can use the private port.
func (s *Server) serveMetrics() {
	if s.metricsLn == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.reg)
	mux.Handle("GET /healthz", s.API)
	mux.Handle("GET /readyz", s.API)
	s.metricsServer = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelDebug),
	}
	s.metricsServed = make(chan error, 1)
	ln := s.metricsLn
	go func() { s.metricsServed <- s.metricsServer.Serve(ln) }()
}

// closeMetrics stops the metrics listener. It goes last among the
// listeners, so that its /readyz said "draining" while the main listener
// drained.
func (s *Server) closeMetrics() error {
	if s.metricsServer == nil {
		if s.metricsLn != nil {
			_ = s.metricsLn.Close() // Run failed before serving it
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.metricsServer.Shutdown(ctx); err != nil {
		_ = s.metricsServer.Close()
	}
	if err := <-s.metricsServed; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve metrics: %w", err)
	}
	return nil
}

// metricsWhere says where metrics are served, for the log.
func (s *Server) metricsWhere() string {
	switch {
	case s.metricsLn != nil && s.Config.Metrics:
		return s.MetricsURL() + "/metrics and " + s.URL() + "/metrics"
	case s.metricsLn != nil:
		return s.MetricsURL() + "/metrics"
	case s.Config.Metrics:
		return s.URL() + "/metrics"
	}
	return "off"
}

// Handler returns what the main listener serves (the API, the console and
// its pages), for a listener of the caller's own; nil before Run.
func (s *Server) Handler() http.Handler {
	if s.httpServer == nil {
		return nil
	}
	return s.httpServer.Handler
}
