package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/front"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/gcfloor"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
	"github.com/switchboard-dev/switchboard/webhook"
)

// ServeCmd runs a server.
type ServeCmd struct {
	PrintUnit       bool          `name:"print-unit" help:"Print a hardened systemd unit that runs this serve command (as a user of its own, DynamicUser, with its data in /var/lib/switchboard and secrets in /etc/switchboard/serve.env), and exit."`
	Install         bool          `name:"install" help:"Write that unit to /etc/systemd/system/switchboard.service (and an empty /etc/switchboard/serve.env, mode 0600, if there is none), and print the systemctl command that starts it."`
	Addr            string        `name:"addr" env:"SWITCHBOARD_ADDR" default:"127.0.0.1:8080" help:"Listen address."`
	PublicURL       string        `name:"public-url" env:"SWITCHBOARD_PUBLIC_URL" help:"Base URL the world reaches this server at (default: taken from each request)."`
	MaxBody         int64         `name:"max-body" env:"SWITCHBOARD_MAX_BODY" default:"1048576" help:"Largest request body, in bytes."`
	RatePerMinute   int           `name:"rate-per-minute" env:"SWITCHBOARD_RATE_PER_MINUTE" default:"60" help:"Requests per minute one peer may make (0: no limit)."`
	MaxOpenTasks    int           `name:"max-open-tasks-per-peer" env:"SWITCHBOARD_MAX_OPEN_TASKS_PER_PEER" default:"${default_max_open_tasks}" help:"Unfinished tasks one peer may hold on one agent; a message that would start another is refused (0: no limit)."`
	MaxPeerBytes    int64         `name:"max-peer-bytes" env:"SWITCHBOARD_MAX_PEER_BYTES" default:"${default_max_peer_bytes}" help:"Bytes of task JSON one peer's unfinished tasks on one agent may hold; a message that would take them past it is refused (0: no limit)."`
	DefaultAgent    string        `name:"default-agent" env:"SWITCHBOARD_DEFAULT_AGENT" help:"Handle of an agent also served at the root paths."`
	TrustForwarded  bool          `name:"trust-forwarded" env:"SWITCHBOARD_TRUST_FORWARDED" help:"Derive public URLs from X-Forwarded-Proto/Host (only behind a proxy that sets them)."`
	TrustedProxies  proxiesFlag   `name:"trusted-proxies" env:"SWITCHBOARD_TRUSTED_PROXIES" placeholder:"CIDR[,CIDR…]" help:"Ranges of the proxies in front of the server: a request that comes from one of them counts as the client X-Forwarded-For names (its right-most address outside these ranges) in the per-address limits and as a pairing request's requester. Default: none, the header is ignored."`
	LogLevel        string        `name:"log-level" env:"SWITCHBOARD_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"Log level."`
	LogFormat       string        `name:"log-format" env:"SWITCHBOARD_LOG_FORMAT" default:"text" enum:"text,json" help:"Log format."`
	ShutdownTimeout time.Duration `name:"shutdown-timeout" env:"SWITCHBOARD_SHUTDOWN_TIMEOUT" default:"10s" help:"How long a shutdown waits for requests in flight."`
	BodyTimeout     time.Duration `name:"body-timeout" env:"SWITCHBOARD_BODY_TIMEOUT" default:"30s" help:"How long a client may take to send a request's body; a request whose body is not read is answered and its connection closed."`
	MaxUnauthConns  int           `name:"max-unauthenticated-conns" env:"SWITCHBOARD_MAX_UNAUTHENTICATED_CONNS" default:"256" help:"Connections one client address may hold open before any of its requests presents a valid token (-1: no bound; behind a proxy every client has the proxy's address)."`
	Metrics         bool          `name:"metrics" env:"SWITCHBOARD_METRICS" help:"Serve Prometheus metrics at GET /metrics on the main listener (to everyone who reaches it; see --metrics-addr)."`
	MCP             bool          `name:"mcp" env:"SWITCHBOARD_MCP" default:"true" help:"Serve every agent's address as an MCP server at {address}/mcp, and the MCP token routes (--mcp=false: all of them answer 404; docs/mcp.md)."`
	MetricsAddr     string        `name:"metrics-addr" env:"SWITCHBOARD_METRICS_ADDR" help:"Serve Prometheus metrics, /healthz and /readyz on a listener of their own at this address (e.g. 127.0.0.1:9090)."`

	DeliveryDeadline time.Duration `name:"delivery-deadline" env:"SWITCHBOARD_DELIVERY_DEADLINE" default:"1h" help:"How long a task waits for its agent to connect and take it before it fails."`
	BlockingTimeout  time.Duration `name:"blocking-timeout" env:"SWITCHBOARD_BLOCKING_TIMEOUT" default:"60s" help:"How long a blocking SendMessage waits for the agent's answer before returning the task as it stands."`
	Heartbeat        time.Duration `name:"heartbeat" env:"SWITCHBOARD_HEARTBEAT" default:"15s" help:"Ping interval of connector agents; a dead agent is dropped within two intervals."`
	RequireApproval  bool          `name:"require-approval" env:"SWITCHBOARD_REQUIRE_APPROVAL" help:"New agents start unapproved: they are not discovery candidates, cannot be sent or send agent-to-agent work until the operator approves them (switchboard agent approve AGENT). Agents the operator creates, and agents that exist already, stay approved."`
	ReconnectGrace   time.Duration `name:"reconnect-grace" env:"SWITCHBOARD_RECONNECT_GRACE" default:"5s" help:"How long after its socket dropped a connector agent is still chosen by discovery when no live agent can take the work (the task then waits for it to reconnect), and how long a live session waits for a dropped end to come back (0: never)."`
	WebhookTimeout   time.Duration `name:"webhook-timeout" env:"SWITCHBOARD_WEBHOOK_TIMEOUT" default:"60s" help:"How long one webhook delivery may take."`
	PushTimeout      time.Duration `name:"push-timeout" env:"SWITCHBOARD_PUSH_TIMEOUT" default:"15s" help:"How long one push notification attempt to a peer may take."`
	PushMaxAttempts  int           `name:"push-max-attempts" env:"SWITCHBOARD_PUSH_MAX_ATTEMPTS" default:"12" help:"Attempts a push notification gets before it is given up."`
	PushMaxAge       time.Duration `name:"push-max-age" env:"SWITCHBOARD_PUSH_MAX_AGE" default:"24h" help:"A push notification that fails when older than this is given up."`
	PushMaxBackoff   time.Duration `name:"push-max-backoff" env:"SWITCHBOARD_PUSH_MAX_BACKOFF" default:"10m" help:"Longest wait between two attempts of a push notification (the wait doubles from 1s, with jitter)."`

	SecretKey string `name:"secret-key" env:"SWITCHBOARD_SECRET_KEY" help:"Keys that seal the secrets the server keeps (webhook secrets, wake keys, push credentials): base64 of 32 bytes, comma-separated, the sealing one first (default: DATA/secret.key, made at first start). Every instance of a deployment needs the same keys."`

	AllowPrivateNetworks bool `name:"allow-private-networks" env:"SWITCHBOARD_ALLOW_PRIVATE_NETWORKS" help:"Let outbound requests (webhooks, push notifications, wakes, fronts, MCP clients' metadata documents) reach private, loopback and link-local addresses. Only for deployments on a private network."`

	Database          string   `name:"database" env:"SWITCHBOARD_DATABASE" help:"A postgres:// URL to share one PostgreSQL database between instances (default: the SQLite file switchboard.db in the data directory)."`
	DatabaseMaxConns  int      `name:"database-max-conns" env:"SWITCHBOARD_DATABASE_MAX_CONNS" default:"16" help:"Connections this instance opens to PostgreSQL at most."`
	Bus               string   `name:"bus" env:"SWITCHBOARD_BUS" default:"memory" help:"How instances tell each other to look again: memory (one instance), embedded (a NATS server inside this process), or nats://host:port[,nats://…] (a NATS cluster)."`
	BusPrefix         string   `name:"bus-prefix" env:"SWITCHBOARD_BUS_PREFIX" default:"switchboard" help:"First token of this deployment's NATS subjects."`
	NATSListen        string   `name:"nats-listen" env:"SWITCHBOARD_NATS_LISTEN" help:"With --bus embedded: host:port where the embedded NATS server accepts clients (default: none, in-process only)."`
	NATSClusterListen string   `name:"nats-cluster-listen" env:"SWITCHBOARD_NATS_CLUSTER_LISTEN" help:"With --bus embedded: host:port where the embedded NATS server accepts routes from the other instances' servers."`
	NATSRoutes        []string `name:"nats-routes" env:"SWITCHBOARD_NATS_ROUTES" help:"With --bus embedded: nats-route://host:port of the other instances' embedded servers (comma-separated)."`

	Retention retentionFlag `name:"retention" env:"SWITCHBOARD_RETENTION" default:"0" help:"Delete tasks that finished (completed, failed, canceled, rejected) longer ago than this, with their events, deliveries and push configurations: days (30d) or a duration (720h); 0 keeps them forever."`

	PprofAddr string `name:"pprof-addr" env:"SWITCHBOARD_PPROF_ADDR" help:"host:port where Go's profiling endpoints (/debug/pprof/) are served (default: none). Keep it private."`

	GCHeadroom int `name:"gc-headroom-mib" env:"SWITCHBOARD_GC_HEADROOM_MIB" default:"${default_gc_headroom_mib}" help:"MiB the heap may grow over what is live before the garbage collector runs, at least (GOGC still applies when it allows more; 0: GOGC alone). Fewer collections, shorter waits, up to this much more memory."`
}

// Run runs the server until ctx ends (SIGINT or SIGTERM).
func (c *ServeCmd) Run(ctx context.Context, cli *CLI, kctx *kong.Context) error {
	if c.PrintUnit || c.Install {
		return writeServeUnit(cli.out, kctx.Args, c.Install)
	}
	if c.GCHeadroom < 0 {
		return fmt.Errorf("--gc-headroom-mib: want 0 or more, got %d", c.GCHeadroom)
	}
	defer gcfloor.Start(uint64(c.GCHeadroom) << 20)()
	m := NewMain(c.config(cli), newLogger(c.LogLevel, c.LogFormat))
	if c.PprofAddr != "" {
		_, stop, err := servePprof(c.PprofAddr, m.Logger)
		if err != nil {
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		defer stop()
	}
	if err := m.Run(ctx); err != nil {
		_ = m.Close()
		return err
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	return m.Close()
}

// config is the Config the flags make.
func (c *ServeCmd) config(cli *CLI) Config {
	return Config{
		Addr: c.Addr, DataDir: cli.Data, PublicURL: c.PublicURL, OwnerToken: cli.OwnerToken,
		MaxBody: c.MaxBody, RatePerMinute: c.RatePerMinute, DefaultAgent: c.DefaultAgent,
		TrustForwarded: c.TrustForwarded, TrustedProxies: c.TrustedProxies.prefixes, ShutdownTimeout: c.ShutdownTimeout, Metrics: c.Metrics, MetricsAddr: c.MetricsAddr, MCPOff: !c.MCP,
		BodyTimeout: c.BodyTimeout, MaxUnauthConns: c.MaxUnauthConns, SecretKey: c.SecretKey,
		DeliveryDeadline: c.DeliveryDeadline, BlockingTimeout: c.BlockingTimeout, Heartbeat: c.Heartbeat,
		RequireApproval: c.RequireApproval, ReconnectGrace: graceOrNone(c.ReconnectGrace),
		WebhookTimeout: c.WebhookTimeout, AllowPrivateNetworks: c.AllowPrivateNetworks,
		Push:     push.SendConfig{Timeout: c.PushTimeout, MaxAttempts: c.PushMaxAttempts, MaxAge: c.PushMaxAge, MaxBackoff: c.PushMaxBackoff},
		Database: c.Database, DatabaseMaxConns: c.DatabaseMaxConns, Bus: c.Bus, BusPrefix: c.BusPrefix,
		NATS:         natsbus.ServerOptions{Listen: c.NATSListen, ClusterListen: c.NATSClusterListen, Routes: c.NATSRoutes},
		Retention:    time.Duration(c.Retention),
		MaxOpenTasks: noLimit(c.MaxOpenTasks), MaxPeerBytes: noLimit(c.MaxPeerBytes),
	}
}

// serveVars are the defaults of serve's flags that come from the packages
// they configure.
func serveVars() kong.Vars {
	return kong.Vars{
		"default_max_open_tasks":  strconv.Itoa(relay.DefaultMaxOpenTasksPerPeer),
		"default_max_peer_bytes":  strconv.FormatInt(relay.DefaultMaxPeerBytes, 10),
		"default_gc_headroom_mib": strconv.Itoa(gcfloor.DefaultHeadroom >> 20),
	}
}

// noLimit turns a flag's 0, "no limit", into Config's: negative (a zero
// Config field means the default).
func noLimit[T int | int64](n T) T {
	if n == 0 {
		return -1
	}
	return n
}

func newLogger(level, format string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// Config is everything a server needs to start. Zero values mean defaults.
type Config struct {
	Addr           string
	DataDir        string
	PublicURL      string
	OwnerToken     string // preset operator token; empty: generate one at first start
	MaxBody        int64
	RatePerMinute  int
	DefaultAgent   string
	TrustForwarded bool
	// TrustedProxies are the ranges of the proxies in front of the server,
	// whose X-Forwarded-For names the client (package clientaddr).
	TrustedProxies  []netip.Prefix
	ShutdownTimeout time.Duration
	// BodyTimeout bounds how long a client may take to send a body.
	BodyTimeout time.Duration
	// SecretKey holds the keys that seal the store's secrets (seal.ParseKeys);
	// empty: the key file in DataDir, made at first start.
	SecretKey string
	// MaxUnauthConns bounds the unauthenticated connections of one client
	// address (0: the default; negative: no bound).
	MaxUnauthConns int
	// MaxOpenTasks bounds the unfinished tasks one peer holds on one agent
	// (relay.Service.MaxOpenTasksPerPeer; 0: the default; negative: no
	// bound).
	MaxOpenTasks int
	// MaxPeerBytes bounds the bytes of one peer's unfinished tasks on one
	// agent (relay.Service.MaxPeerBytes; 0: the default; negative: no
	// bound).
	MaxPeerBytes int64
	// DeliveryDeadline is how long a task waits for its agent to take it.
	DeliveryDeadline time.Duration
	// BlockingTimeout bounds how long a blocking send waits for an answer.
	BlockingTimeout time.Duration
	// Heartbeat is the ping interval of connector connections.
	Heartbeat time.Duration
	// RequireApproval makes new agents wait for the operator's approval
	// before they take part in the network.
	RequireApproval bool
	// ReconnectGrace is how long after its socket dropped a connector
	// agent stays a candidate of discovery (0: the default; negative:
	// none).
	ReconnectGrace time.Duration
	// WebhookTimeout bounds one webhook delivery.
	WebhookTimeout time.Duration
	// Push tunes the push notification sender (timeout, give-up limits,
	// backoff); zero values mean its defaults.
	Push push.SendConfig
	// AllowPrivateNetworks lets outbound requests reach private addresses.
	AllowPrivateNetworks bool
	// OutboundAllow lists extra prefixes outbound requests may reach (tests).
	OutboundAllow []netip.Prefix
	// FrontRootCAs, if set, are the certificates fronts' upstreams are
	// checked against (tests); nil: the system's (SSL_CERT_FILE is read).
	FrontRootCAs *x509.CertPool
	// ClientMetadataRootCAs, if set, are the certificates the hosts of
	// MCP clients' metadata documents are checked against (tests); nil:
	// the system's.
	ClientMetadataRootCAs *x509.CertPool
	// FrontTimeout bounds one task's exchange with a front's upstream
	// (default front.DefaultTimeout).
	FrontTimeout time.Duration

	// Database is a postgres:// URL; empty means SQLite in DataDir.
	Database string
	// DatabaseMaxConns bounds this instance's PostgreSQL connections.
	DatabaseMaxConns int
	// Bus is "memory" (or empty), "embedded", or NATS server URLs.
	Bus string
	// BusPrefix is the first token of the deployment's NATS subjects.
	BusPrefix string
	// NATS configures the embedded NATS server of Bus "embedded".
	NATS natsbus.ServerOptions

	// Retention is how long finished tasks are kept; 0 keeps them forever.
	Retention time.Duration
	// RetentionInterval is how often old finished tasks are looked for;
	// 0 means switchboard.DefaultExpiryInterval.
	RetentionInterval time.Duration

	// Metrics serves GET /metrics on the main listener.
	Metrics bool
	// MCPOff turns off every MCP route: agents' {address}/mcp and the MCP
	// token routes answer 404.
	MCPOff bool
	// MetricsAddr is the address of a listener of its own for /metrics,
	// /healthz and /readyz; empty: none.
	MetricsAddr string
}

// Main is a running server: it opens the store, the bus and the HTTP
// listener in Run, and closes them in the reverse order in Close. Tests use
// it with Addr ":0" and a temporary data directory.
type Main struct {
	Config Config
	Logger *slog.Logger

	DB    *sqlstore.DB
	Bus   switchboard.Bus
	Tasks *relay.Service
	// Pushes sends the push notifications task changes queue.
	Pushes *push.Service
	// Outbox records what agents send and the pushes answering them; a
	// push wakes the sending agent (kind outbound_update) when it has a
	// wake webhook.
	Outbox *outbox.Service
	// Wakes queues and sends wake webhooks.
	Wakes *wake.Service
	// Network holds communities, approval, discovery and the directory.
	Network *network.Service
	// Sessions runs the live sessions between connected agents.
	Sessions *session.Service

	// nats is the embedded NATS server of Bus "embedded".
	nats *server.Server
	Hub  *hub.Hub
	API  *httpapi.Server
	// Console is the web console at /dashboard.
	Console *dashboard.Console
	// Pairing runs the device authorization grant; Device is its page
	// ({address}/device).
	Pairing *pairing.Service
	Device  *dashboard.DevicePage
	// Fronts forwards the work of front agents to their upstreams.
	Fronts *front.Service
	// OutboundPeers keeps agents' synced aliases, for the owner API and
	// the MCP tools.
	OutboundPeers *outpeer.Service
	// OAuth gives MCP clients MCP tokens by OAuth 2.1; Consent is its
	// authorization page. Nil when MCP is off.
	OAuth   *mcpauth.Service
	Consent *dashboard.ConsentPage

	// loops are the background loops (sweeper, dispatcher).
	loops     sync.WaitGroup
	stopLoops context.CancelFunc

	// GeneratedOwnerToken is the operator token created by this start, if
	// it created one (first start without a preset token).
	GeneratedOwnerToken string

	ln         net.Listener
	httpServer *http.Server
	served     chan error

	// metrics holds every metric of the process; metricsServer serves them
	// on MetricsAddr.
	metrics       *processMetrics
	metricsLn     net.Listener
	metricsServer *http.Server
	metricsServed chan error
}

// NewMain returns a Main that Run will start.
func NewMain(cfg Config, logger *slog.Logger) *Main {
	return &Main{Config: cfg, Logger: logger}
}

// Run opens everything and starts serving in the background. It returns
// once the server accepts connections and /readyz answers 200.
func (m *Main) Run(ctx context.Context) error {
	cfg := m.Config
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	warnIfShared(m.Logger, cfg.DataDir)
	m.metrics = newProcessMetrics()
	db, where, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	m.DB = db
	if err := m.sealSecrets(ctx, cfg); err != nil {
		return err
	}
	db.OnTaskState = m.metrics.onTaskState
	if err := m.openBus(cfg); err != nil {
		return err
	}
	m.metrics.registerBus(m.Bus)
	carrier, _ := m.Bus.(switchboard.Carrier) // the live sessions' frames
	m.Bus = &meteredBus{Bus: m.Bus, pm: m.metrics}
	m.Tasks = relay.New(db, m.Bus, m.Logger)
	m.Tasks.OnAck = m.metrics.onAck
	if cfg.MaxOpenTasks != 0 {
		m.Tasks.MaxOpenTasksPerPeer = max(cfg.MaxOpenTasks, 0)
	}
	if cfg.MaxPeerBytes != 0 {
		m.Tasks.MaxPeerBytes = max(cfg.MaxPeerBytes, 0)
	}
	m.Outbox = outbox.New(db, db)
	m.Network = m.newNetwork(cfg, db)

	// Instances that start together on an empty database race to create
	// the operator; the losers find the winner's account on the next try.
	for attempt := 1; ; attempt++ {
		err := m.bootstrapOperator(ctx)
		if err == nil {
			break
		}
		if switchboard.ErrorCode(err) != switchboard.ECONFLICT || attempt == 3 {
			return err
		}
	}
	if cfg.DefaultAgent != "" {
		h, err := switchboard.NormalizeHandle(cfg.DefaultAgent)
		if err != nil {
			return fmt.Errorf("default agent: %w", err)
		}
		cfg.DefaultAgent = h
	}

	if cfg.DeliveryDeadline > 0 {
		m.Tasks.DeliveryDeadline = cfg.DeliveryDeadline
	}
	pushCfg := cfg.Push
	pushCfg.OnAttempt = m.metrics.onPushAttempt
	m.Pushes = push.NewService(db, m.Bus, push.New(netguard.Options{
		AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow, Timeout: pushCfg.Timeout,
	}, "switchboard/"+version), m.Logger)
	m.Pushes.InstanceID = m.Tasks.InstanceID
	m.Wakes = m.newWakeService(cfg, db)
	m.Outbox.Bus = m.Bus // pushes queue outbound_update wakes in their own transaction
	m.metrics.registerWakes(m.Wakes)
	limiter := newLimiter(cfg, db)
	if shared, ok := limiter.(*ratelimit.Shared); ok {
		shared.Log = m.Logger
		m.metrics.reg.MustRegister(metrics.NewCounterFunc("switchboard_rate_limit_failures_total",
			"Requests let through because the shared rate limit could not be counted (fail open).",
			func() float64 { return float64(shared.Failures()) }))
	}
	if err := m.startSessions(ctx, cfg, carrier); err != nil {
		return err
	}
	published := &front.Published{Store: db, Logger: m.Logger.With("face", "published-cards")}
	m.Hub = hub.New(hub.Deps{
		Service: m.Tasks, Agents: db, Tokens: db, Bus: m.Bus, Logger: m.Logger, InstanceID: m.Tasks.InstanceID,
		Limiter: limiter, OnAuthenticated: httpapi.MarkAuthenticated, Network: m.Network, Sessions: m.Sessions, Cards: published,
	}, hub.Config{HeartbeatInterval: cfg.Heartbeat, AckTimeout: m.Tasks.AckTimeout, MaxSendBytes: int(cfg.MaxBody)})
	m.Tasks.Direct = m.Hub          // new tasks for agents connected here are offered as they are created
	var metricsHandler http.Handler // /metrics on the main listener only when asked
	if cfg.Metrics {
		metricsHandler = m.metrics.reg
	}
	m.Pairing = m.newPairing(cfg, db)
	if !cfg.MCPOff {
		m.OAuth = m.newOAuth(cfg, db)
	}
	m.Fronts = front.NewService(db, m.Tasks, front.ClientOptions{
		Guard:   netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow},
		RootCAs: cfg.FrontRootCAs,
	}, cfg.FrontTimeout, m.Logger)
	m.OutboundPeers = outpeer.New(db, front.ClientOptions{
		Guard:   netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow},
		RootCAs: cfg.FrontRootCAs,
	})
	m.API = httpapi.New(httpapi.Deps{
		Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: m.Tasks, Outbox: m.Outbox, Limiter: limiter,
		Logger: m.Logger, Bus: m.Bus, Connect: m.Hub, Presence: m.Tasks, Pinger: db, MetricsHandler: metricsHandler,
		Wakes: m.Wakes, Pushes: m.Pushes, Network: m.Network, Pairing: m.Pairing, MCP: m.newMCP(cfg, db, limiter),
		Fronts: m.Fronts, OAuth: m.OAuth, Published: published, OutboundPeers: m.OutboundPeers,
	}, httpapi.Config{
		PublicURL: cfg.PublicURL, TrustForwarded: cfg.TrustForwarded, MaxBody: cfg.MaxBody,
		DefaultAgent: cfg.DefaultAgent, Version: version, BlockingTimeout: cfg.BlockingTimeout,
		PushNotifications: true, BodyTimeout: cfg.BodyTimeout, TrustedProxies: cfg.TrustedProxies,
	})
	m.Hub.AddressOf = m.API.AddressURL
	if m.Console, err = m.newConsole(cfg, db, published); err != nil {
		return err
	}
	if m.Device, err = dashboard.NewDevicePage(m.Console, m.Pairing, cfg.DefaultAgent); err != nil {
		return err
	}
	if m.OAuth != nil {
		if m.Consent, err = dashboard.NewConsentPage(m.Console, m.OAuth); err != nil {
			return err
		}
	}
	m.metrics.reg.MustRegister(m.API.Metrics()...)
	m.metrics.reg.MustRegister(m.Hub.Metrics()...)
	(&storeGauges{db: db, log: m.Logger}).register(m.metrics.reg)

	var loops context.Context
	loops, m.stopLoops = context.WithCancel(context.Background())
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		_ = m.Tasks.RunDeliverySweeper(loops, 0)
	}()
	if cfg.Retention > 0 {
		m.loops.Add(1)
		go func() {
			defer m.loops.Done()
			_ = m.Tasks.RunTaskExpiry(loops, cfg.Retention, cfg.RetentionInterval)
		}()
	}
	if cfg.AllowPrivateNetworks {
		m.Logger.Warn("OUTBOUND REQUESTS MAY REACH PRIVATE NETWORKS (--allow-private-networks): webhooks, push notifications and wakes can target loopback, LAN and metadata addresses")
	}
	deliverer := &webhook.Deliverer{
		Client: netguard.NewClient(netguard.Options{
			AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow, Timeout: cfg.WebhookTimeout,
		}),
		UserAgent: "switchboard/" + version,
	}
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		_ = m.Tasks.RunDispatcher(loops, switchboard.ModeWebhook, deliverer, relay.DispatchConfig{Timeout: cfg.WebhookTimeout})
	}()
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		// A front's exchange runs until the upstream ends the turn: many
		// may be in flight, for one agent too. A lone instance (SQLite
		// and the in-process bus) sends a blocking call's new task before
		// writing it, which only it can keep track of.
		_ = m.Tasks.RunDispatcher(loops, switchboard.ModeFront, m.Fronts, relay.DispatchConfig{
			Concurrency: 256, PerAgent: 256, Timeout: frontTimeout(cfg.FrontTimeout) + 30*time.Second, Direct: true,
			WriteOnAnswer: !isPostgres(cfg.Database) && busName(cfg.Bus) == "memory"})
	}()
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		_ = m.Pushes.Run(loops, pushCfg)
	}()
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		_ = m.Pairing.RunSweeper(loops, 0)
	}()

	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln := httpapi.Listen(tcp, httpapi.ListenerConfig{UnauthenticatedPerAddress: cfg.MaxUnauthConns, Logger: m.Logger})
	m.metrics.registerListener(ln)
	if cfg.MetricsAddr != "" {
		if m.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
	}
	m.ln = ln
	// The wake sender starts once the listener is known: a wake names the
	// agent's card, whose URL may be the listener's.
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		_ = m.Wakes.RunSender(loops, wake.SenderConfig{})
	}()
	m.httpServer = &http.Server{
		Handler:           withConsole(m.API, m.Console, m.Device, m.Consent),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelDebug),
		ConnContext:       httpapi.ConnContext,
	}
	m.httpServer.RegisterOnShutdown(m.API.CloseStreams)
	m.httpServer.RegisterOnShutdown(m.Console.CloseStreams)
	m.served = make(chan error, 1)
	go func() { m.served <- m.httpServer.Serve(ln) }()
	m.serveMetrics()
	m.API.SetReady(true)

	m.Logger.Info("switchboard is serving", "url", m.URL(), "data", cfg.DataDir, "database", where,
		"bus", busName(cfg.Bus), "instance", m.Tasks.InstanceID, "metrics", m.metricsWhere(), "retention", retentionWhere(cfg.Retention))
	return nil
}

// newWakeService builds the wake sender: wakes go through the network
// guard (15 s per request), over https unless the guard was opened, and name the agent's card at the public URL, or
// at the listener's when none is set.
func (m *Main) newWakeService(cfg Config, db *sqlstore.DB) *wake.Service {
	guard := netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow}
	sender := wake.New(guard)
	sender.UserAgent = "switchboard/" + version
	sender.CardURL = func(g *switchboard.Agent) string {
		base := strings.TrimRight(cfg.PublicURL, "/")
		if base == "" {
			base = m.URL()
		}
		return base + "/a/" + g.Handle + "/.well-known/agent-card.json"
	}
	w := wake.NewService(db, db, m.Bus, sender, m.Logger)
	w.InstanceID = m.Tasks.InstanceID
	w.CheckTemplate = wake.CheckTemplate
	w.AllowHTTP = guard.AllowsPlainHTTP() // plain http only where the operator opened the guard
	return w
}

// serveMetrics serves /metrics, /healthz and /readyz on the metrics
// listener, if there is one. Health answers as on the main listener, so
// that probes can use the private port.
func (m *Main) serveMetrics() {
	if m.metricsLn == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.metrics.reg)
	mux.Handle("GET /healthz", m.API)
	mux.Handle("GET /readyz", m.API)
	m.metricsServer = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelDebug),
	}
	m.metricsServed = make(chan error, 1)
	ln := m.metricsLn
	go func() { m.metricsServed <- m.metricsServer.Serve(ln) }()
}

// metricsWhere says where metrics are served, for the log.
func (m *Main) metricsWhere() string {
	switch {
	case m.metricsLn != nil && m.Config.Metrics:
		return m.MetricsURL() + "/metrics and " + m.URL() + "/metrics"
	case m.metricsLn != nil:
		return m.MetricsURL() + "/metrics"
	case m.Config.Metrics:
		return m.URL() + "/metrics"
	}
	return "off"
}

// MetricsURL returns the base URL of the metrics listener, or "" without
// one.
func (m *Main) MetricsURL() string {
	if m.metricsLn == nil {
		return ""
	}
	return baseURL(m.metricsLn)
}

// URL returns the base URL the server listens on.
func (m *Main) URL() string {
	if m.ln == nil {
		return ""
	}
	return baseURL(m.ln)
}

// baseURL returns the URL of a listener, with a wildcard host made
// loopback.
func baseURL(ln net.Listener) string {
	addr := ln.Addr().String()
	if host, port, err := net.SplitHostPort(addr); err == nil && (host == "::" || host == "0.0.0.0" || host == "") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + addr
}

// Close stops the server: it stops accepting, ends open streams, waits up to
// ShutdownTimeout for requests in flight, then closes the bus and the
// store. It is safe to call after a failed Run.
func (m *Main) Close() error {
	var errs []error
	timeout := m.Config.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if m.httpServer != nil {
		m.API.SetReady(false)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		// Agents first: they are told the server restarts and reconnect
		// elsewhere or later; their unacknowledged work goes back to the queue.
		if err := m.Hub.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := m.httpServer.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down http: %w", err))
			_ = m.httpServer.Close()
		}
		cancel()
		if err := <-m.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("serve http: %w", err))
		}
		m.httpServer = nil
	}
	// The metrics listener last, so that its /readyz said "draining" while
	// the main listener drained.
	if m.metricsServer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := m.metricsServer.Shutdown(ctx); err != nil {
			_ = m.metricsServer.Close()
		}
		cancel()
		if err := <-m.metricsServed; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("serve metrics: %w", err))
		}
		m.metricsServer = nil
	} else if m.metricsLn != nil {
		_ = m.metricsLn.Close() // Run failed before serving it
	}
	if m.stopLoops != nil {
		m.stopLoops()
		m.loops.Wait()
	}
	if m.Sessions != nil {
		m.Sessions.Close() // after the hub: its connections' sessions were told they dropped
	}
	if m.Bus != nil {
		errs = append(errs, m.Bus.Close())
	}
	if m.nats != nil {
		m.nats.Shutdown()
		m.nats.WaitForShutdown()
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	return errors.Join(errs...)
}

// bootstrapOperator makes sure the operator account exists and holds the
// right owner token. At first start it creates the account; its token is
// the preset one, or a new one written to a 0600 file in the data
// directory. At later starts a preset token replaces the operator's token
// if it differs, which is also how a lost token is recovered.
func (m *Main) bootstrapOperator(ctx context.Context) error {
	op, err := m.findOperator(ctx)
	if err != nil {
		return err
	}
	preset := strings.TrimSpace(m.Config.OwnerToken)
	if preset != "" && len(preset) < switchboard.MinPresetTokenLen {
		return fmt.Errorf("owner token: a preset token must be at least %d characters", switchboard.MinPresetTokenLen)
	}
	if op == nil {
		op = &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
		if err := m.DB.CreateAccount(ctx, op); err != nil {
			return fmt.Errorf("create operator account: %w", err)
		}
		m.Logger.Info("created the operator account", "account_id", op.ID)
	} else if preset == "" {
		return nil
	}

	secret, hash := preset, switchboard.HashToken(preset)
	if preset == "" {
		secret, hash = switchboard.NewToken(switchboard.TokenOwner)
	} else if tok, err := m.DB.FindTokenByHash(ctx, hash); err == nil && tok.Kind == switchboard.TokenOwner && tok.AccountID == op.ID {
		return nil // the preset token is already the operator's
	}
	if err := m.DB.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: op.ID}, true); err != nil {
		return fmt.Errorf("set operator token: %w", err)
	}
	path := filepath.Join(m.Config.DataDir, ownerTokenFile)
	if preset != "" {
		// A token file from an earlier start now holds a revoked token.
		if err := os.Remove(path); err == nil {
			m.Logger.Info("removed the owner token file: the preset token replaced it", "file", path)
		}
		m.Logger.Info("the operator's owner token is the preset one (SWITCHBOARD_OWNER_TOKEN / --owner-token)")
		return nil
	}
	// A new file renamed into place: a file (or a symlink) already there
	// is replaced, never written through, and the token is never readable
	// by anyone else, even for a moment.
	if err := writeFileAtomic(path, []byte(secret+"\n"), 0o600, 0o700); err != nil {
		return fmt.Errorf("write owner token file: %w", err)
	}
	m.GeneratedOwnerToken = secret
	m.Logger.Info("generated the operator's owner token; keep it secret", "file", path)
	return nil
}

func (m *Main) findOperator(ctx context.Context) (*switchboard.Account, error) {
	all, err := m.DB.FindAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	for _, a := range all {
		if a.IsOperator() {
			return a, nil
		}
	}
	return nil, nil
}

// retentionWhere says how long finished tasks are kept, for the log.
func retentionWhere(d time.Duration) string {
	if d <= 0 {
		return "forever"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// frontTimeout is a front's exchange timeout, its default for 0.
func frontTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return front.DefaultTimeout
	}
	return d
}
