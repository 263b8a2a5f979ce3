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
// unauthenticated connections) and the metrics listener, if one is set.
func (s *Server) listen() error {
	cfg := s.Config
	addr := cfg.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln := httpapi.Listen(tcp, httpapi.ListenerConfig{UnauthenticatedPerAddress: cfg.MaxUnauthConns, Logger: s.Logger})
	s.metrics.registerListener(ln)
	s.ln = ln
	if cfg.MetricsAddr != "" {
		if s.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
	}
	return nil
}

// serve starts serving the listeners.
func (s *Server) serve() {
	s.httpServer = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelDebug),
		ConnContext:       httpapi.ConnContext,
	}
	s.httpServer.RegisterOnShutdown(s.API.CloseStreams)
	s.httpServer.RegisterOnShutdown(s.Console.CloseStreams)
	s.served = make(chan error, 1)
	ln := s.ln
	go func() { s.served <- s.httpServer.Serve(ln) }()
	s.serveMetrics()
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
