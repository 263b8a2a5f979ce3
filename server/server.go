package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/reach"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/tracing"
	"github.com/switchboard-dev/switchboard/wake"
)

// Server is a running deployment instance: Run opens the store, the bus,
// the services and the faces and starts serving; Close closes them in the
// reverse order. Its exported fields are what Run built, for tests and for
// the commands that run beside it; nothing changes them after Run.
type Server struct {
	Config Config
	Logger *slog.Logger

	DB    *sqlstore.DB
	Bus   switchboard.Bus
	Tasks *relay.Service
	// Pushes sends the push notifications task changes queue.
	Pushes *push.Service
	// Outbox records what agents send and the pushes answering them.
	Outbox *outbox.Service
	// Wakes queues and sends wake webhooks.
	Wakes *wake.Service
	// Network holds communities, approval, discovery and the directory.
	Network *network.Service
	// Sessions runs the live sessions between connected agents.
	Sessions *session.Service
	// Hub holds the connector agents' WebSockets.
	Hub *hub.Hub
	// API serves the addresses, the owner API and health.
	API *API
	// Console is the web console at /dashboard.
	Console *dashboard.Console
	// Pairing runs the device authorization grant; Device is its page
	// ({address}/device).
	Pairing *pairing.Service
	Device  *dashboard.DevicePage
	// Fronts forwards the work of front agents to their upstreams.
	Fronts *front.Service
	// OutboundPeers keeps agents' synced aliases.
	OutboundPeers *outpeer.Service
	// OAuth gives MCP clients MCP tokens by OAuth 2.1; Consent is its
	// authorization page. Both nil when MCP is off.
	OAuth   *mcpauth.Service
	Consent *dashboard.ConsentPage
	// Audit records the audit log (docs/operating.md, "Audit log").
	Audit *audit.Log
	// Certs obtains and renews the HTTPS certificates over ACME; nil
	// without Config.ACME.Domains.
	Certs *certs.Manager

	// Tracer exports the spans of requests and deliveries; nil when
	// Config.OTLPEndpoint is empty (tracing off).
	Tracer *tracing.Tracer

	// GeneratedOwnerToken is the operator token created by this start, if
	// it created one (first start without a preset token).
	GeneratedOwnerToken string

	instanceID string                  // names this process among the deployment's instances
	nats       *natsserver.Server      // the embedded NATS server of Bus "embedded"
	loops      *supervisor             // the background loops
	metrics    *processMetrics         // every metric of the process
	published  *front.Published        // the cards forwarding connectors publish, read by the API and the console
	reach      *reach.Checker          // checks the public addresses' reachability, for the API and the console
	limiter    switchboard.RateLimiter // the per-peer rate limit
	auditFile  *os.File                // the file of Config.AuditLog; nil for none or stdout
	dataLock   *os.File                // holds the data directory's lock (SQLite); nil on PostgreSQL

	ln            net.Listener
	httpServer    *http.Server
	served        chan error
	listeners     []*httpapi.Listener // the main listeners: plain, and HTTPS
	httpsLn       net.Listener        // nil without HTTPS
	httpsServer   *http.Server
	httpsServed   chan error
	certs         certSource // the HTTPS listener's certificates; nil without HTTPS
	metricsLn     net.Listener
	metricsServer *http.Server
	metricsServed chan error
	closed        bool // Close has run
}

// New returns a Server that Run will start. Tests use it with Addr
// "127.0.0.1:0" and a temporary data directory.
func New(cfg Config, logger *slog.Logger) *Server {
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	return &Server{Config: cfg, Logger: logger, instanceID: switchboard.NewID()}
}

// Run opens everything and starts serving in the background. It returns
// once the server accepts connections and /readyz answers 200; on an error
// the caller calls Close to release what was opened.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Config.checkTLS(); err != nil {
		return err
	}
	cfg := s.Config
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	warnIfShared(s.Logger, cfg.DataDir)
	if !IsPostgres(cfg.Database) {
		lock, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return err
		}
		s.dataLock = lock
	}
	s.metrics = newProcessMetrics(cfg.Version)
	s.loops = newSupervisor(s.Logger)
	tracer, err := tracing.Open(tracing.Config{Endpoint: cfg.OTLPEndpoint, SampleRatio: cfg.TraceSample,
		InstanceID: s.instanceID, Version: cfg.Version, BatchTimeout: cfg.TraceBatchTimeout})
	if err != nil {
		return fmt.Errorf("traces: %w", err)
	}
	s.Tracer = tracer

	db, where, err := s.openStore(ctx)
	if err != nil {
		return err
	}
	s.DB = db
	db.OnTaskState = s.metrics.onTaskState
	db.OnWrite = s.metrics.onStoreWrite
	carrier, err := s.openBus()
	if err != nil {
		return err
	}
	if err := s.buildServices(ctx, carrier); err != nil {
		return err
	}
	if err := s.buildFaces(); err != nil {
		return err
	}
	if err := s.listen(); err != nil {
		return err
	}
	if s.httpsLn != nil {
		if err := s.openCerts(); err != nil {
			return err
		}
	}
	s.startLoops()
	s.serve()
	s.API.SetReady(true)
	if s.Certs != nil {
		// After serving: the CA's challenges come to the listeners.
		if err := s.Certs.Start(); err != nil {
			return fmt.Errorf("manage certificates: %w", err)
		}
	}

	s.Logger.Info("switchboard is serving", "url", s.URL(), "https", s.HTTPSURL(), "public_url", cfg.PublicURL, "data", cfg.DataDir, "database", where,
		"bus", busName(cfg.Bus), "instance", s.instanceID, "metrics", s.metricsWhere(), "retention", retentionWhere(cfg.Retention))
	return nil
}

// Fatal receives, once, the error of a background loop that cannot go on
// (the bus closed for good): the process must end, non-zero, and be
// started again by its supervisor. It is nil before Run.
func (s *Server) Fatal() <-chan error {
	if s.loops == nil {
		return nil
	}
	return s.loops.Fatal()
}

// URL returns the base URL of the plain HTTP listener. With HTTPS, it
// serves loopback clients (tests, the CLI on the machine) as it does
// without, and redirects everyone else to HTTPSURL.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return baseURL(s.ln)
}

// MetricsURL returns the base URL of the metrics listener, or "" without
// one.
func (s *Server) MetricsURL() string {
	if s.metricsLn == nil {
		return ""
	}
	return baseURL(s.metricsLn)
}

// baseURL returns the http URL of a listener, with a wildcard host made
// loopback.
func baseURL(ln net.Listener) string {
	return "http://" + loopbackAddr(ln)
}

// loopbackAddr returns the address of a listener, with a wildcard host
// made loopback.
func loopbackAddr(ln net.Listener) string {
	addr := ln.Addr().String()
	if host, port, err := net.SplitHostPort(addr); err == nil && (host == "::" || host == "0.0.0.0" || host == "") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// Close stops the server in the reverse order of Run: it marks it not
// ready, closes the agents' connections (their unacknowledged work goes
// back to the queue), stops accepting (plain HTTP and HTTPS), ends open
// streams, waits up to ShutdownTimeout for requests in flight, stops the
// background loops and the certificate manager's work, and closes the
// live sessions, the bus and the store, and sends the last spans. It is safe to call after
// a failed Run, and more than once.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	timeout := s.Config.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if s.httpServer != nil {
		s.API.SetReady(false)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		// Agents first: they are told the server restarts and reconnect
		// elsewhere or later; their unacknowledged work goes back to the queue.
		if err := s.Hub.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		// Both listeners at once: neither takes work while the other drains.
		httpsDone, httpsErr := make(chan struct{}), error(nil)
		go func() {
			defer close(httpsDone)
			if s.httpsServer != nil {
				httpsErr = shutdown(ctx, "https", s.httpsServer, s.httpsServed)
			}
		}()
		errs = append(errs, shutdown(ctx, "http", s.httpServer, s.served))
		<-httpsDone
		errs = append(errs, httpsErr)
		cancel()
		s.httpServer, s.httpsServer = nil, nil
	} else {
		for _, ln := range s.listeners {
			_ = ln.Close() // Run failed before serving them
		}
	}
	errs = append(errs, s.closeMetrics())
	if s.loops != nil {
		s.loops.stop()
	}
	if s.Fronts != nil {
		s.Fronts.Close() // after the loops: the dispatcher forwards with them
	}
	if s.certs != nil {
		// Before the store: certmagic's background work uses it.
		errs = append(errs, s.certs.Close())
	}
	if s.Sessions != nil {
		s.Sessions.Close() // after the hub: its connections' sessions were told they dropped
	}
	if s.Bus != nil {
		errs = append(errs, s.Bus.Close())
	}
	if s.nats != nil {
		s.nats.Shutdown()
		s.nats.WaitForShutdown()
	}
	if s.DB != nil {
		errs = append(errs, s.DB.Close())
	}
	if s.auditFile != nil {
		errs = append(errs, s.auditFile.Close())
	}
	if s.dataLock != nil {
		errs = append(errs, s.dataLock.Close()) // after the store: the next server may open it
	}
	if s.Tracer != nil {
		// Last: the spans of the shutdown itself are sent too.
		// A collector that is down costs the last spans, not a clean stop.
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if err := s.Tracer.Close(ctx); err != nil {
			s.Logger.Warn("traces: the last spans were not sent", "err", err)
		}
		cancel()
	}
	return errors.Join(errs...)
}

// shutdown shuts one of the main http.Servers down within ctx, closing it
// when ctx ends first, and waits for its Serve to return.
func shutdown(ctx context.Context, name string, srv *http.Server, served chan error) error {
	var errs []error
	if err := srv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("shut down %s: %w", name, err))
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serve %s: %w", name, err))
	}
	return errors.Join(errs...)
}
