package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/gcfloor"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/server"
)

// ServeCmd runs a server.
type ServeCmd struct {
	PrintUnit       bool          `name:"print-unit" help:"Print a hardened systemd unit that runs this serve command (as a user of its own, DynamicUser, with its data in /var/lib/switchboard and secrets in /etc/switchboard/serve.env), and exit."`
	Install         bool          `name:"install" help:"Write that unit to /etc/systemd/system/switchboard.service (and an empty /etc/switchboard/serve.env, mode 0600, if there is none), and print the systemctl command that starts it."`
	Addr            string        `name:"addr" env:"SWITCHBOARD_ADDR" help:"Listen address of plain HTTP (default 127.0.0.1:8080; with --domain, :80, where the CA's HTTP-01 challenges come). With HTTPS, it serves loopback clients and redirects everyone else to https."`
	PublicURL       string        `name:"public-url" env:"SWITCHBOARD_PUBLIC_URL" help:"Base URL the world reaches this server at (default: taken from each request)."`
	MaxBody         int64         `name:"max-body" env:"SWITCHBOARD_MAX_BODY" default:"1048576" help:"Largest request body, in bytes."`
	RatePerMinute   int           `name:"rate-per-minute" env:"SWITCHBOARD_RATE_PER_MINUTE" default:"60" help:"Requests per minute one peer may make (0: no limit)."`
	MaxOpenTasks    int           `name:"max-open-tasks-per-peer" env:"SWITCHBOARD_MAX_OPEN_TASKS_PER_PEER" default:"${default_max_open_tasks}" help:"Unfinished tasks one peer may hold on one agent; a message that would start another is refused (0: no limit)."`
	MaxPeerBytes    int64         `name:"max-peer-bytes" env:"SWITCHBOARD_MAX_PEER_BYTES" default:"${default_max_peer_bytes}" help:"Bytes of task JSON one peer's unfinished tasks on one agent may hold; a message that would take them past it is refused (0: no limit)."`
	DefaultAgent    string        `name:"default-agent" env:"SWITCHBOARD_DEFAULT_AGENT" help:"Handle of an agent also served at the root paths."`
	MaxDomains      int           `name:"max-domains-per-account" env:"SWITCHBOARD_MAX_DOMAINS_PER_ACCOUNT" default:"${default_max_domains}" help:"Agents of one account that may hold a domain (docs/agents.md, Agent domains), so that no owner spends the deployment's certificate authority limits alone; the operator has no bound (0: no one but the operator gives agents domains)."`
	TrustForwarded  bool          `name:"trust-forwarded" env:"SWITCHBOARD_TRUST_FORWARDED" help:"Derive public URLs from X-Forwarded-Proto/Host (only behind a proxy that sets them)."`
	TrustedProxies  proxiesFlag   `name:"trusted-proxies" env:"SWITCHBOARD_TRUSTED_PROXIES" placeholder:"CIDR[,CIDR…]" help:"Ranges of the proxies in front of the server: a request that comes from one of them counts as the client X-Forwarded-For names (its right-most address outside these ranges) in the per-address limits and as a pairing request's requester. Default: none, the header is ignored."`
	LogLevel        string        `name:"log-level" env:"SWITCHBOARD_LOG_LEVEL" default:"info" enum:"debug,info,warn,error" help:"Log level."`
	LogFormat       string        `name:"log-format" env:"SWITCHBOARD_LOG_FORMAT" default:"text" enum:"text,json" help:"Log format."`
	ShutdownTimeout time.Duration `name:"shutdown-timeout" env:"SWITCHBOARD_SHUTDOWN_TIMEOUT" default:"10s" help:"How long a shutdown waits for requests in flight."`
	BodyTimeout     time.Duration `name:"body-timeout" env:"SWITCHBOARD_BODY_TIMEOUT" default:"30s" help:"How long a client may take to send a request's body; a body the server does not read is read and dropped within that time (up to twice --max-body), then the request is answered and its connection closed."`
	MaxUnauthConns  int           `name:"max-unauthenticated-conns" env:"SWITCHBOARD_MAX_UNAUTHENTICATED_CONNS" default:"256" help:"Connections one client address may hold open before any of its requests presents a valid token (-1: no bound; behind a proxy every client has the proxy's address)."`
	Metrics         bool          `name:"metrics" env:"SWITCHBOARD_METRICS" help:"Serve Prometheus metrics at GET /metrics on the main listener (to everyone who reaches it; see --metrics-addr)."`
	MCP             bool          `name:"mcp" env:"SWITCHBOARD_MCP" default:"true" help:"Serve every agent's address as an MCP server at {address}/mcp, and the MCP token routes (--mcp=false: all of them answer 404; docs/mcp.md)."`
	MetricsAddr     string        `name:"metrics-addr" env:"SWITCHBOARD_METRICS_ADDR" help:"Serve Prometheus metrics, /healthz and /readyz on a listener of their own at this address (e.g. 127.0.0.1:9090)."`
	OTLPEndpoint    string        `name:"otlp-endpoint" env:"OTEL_EXPORTER_OTLP_ENDPOINT" placeholder:"URL" help:"Export OpenTelemetry traces over OTLP/HTTP to this base URL (spans are posted to URL/v1/traces, e.g. http://127.0.0.1:4318). Default: no traces, at no cost (docs/operating.md, Traces)."`
	TraceSample     float64       `name:"trace-sample" env:"SWITCHBOARD_TRACE_SAMPLE" default:"1.0" help:"Share (0 to 1) of the traces that start here which are exported; a peer's traceparent keeps its own decision (parent-based)."`

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
	SQLiteSynchronous string   `name:"sqlite-synchronous" env:"SWITCHBOARD_SQLITE_SYNCHRONOUS" default:"normal" enum:"normal,full" help:"When SQLite syncs its log to disk: normal (at checkpoints: a killed process loses nothing, a power loss may lose the last moments' acknowledged work) or full (at every commit: acknowledged work survives a power loss, at a cost per commit; docs/deploying.md)."`
	Bus               string   `name:"bus" env:"SWITCHBOARD_BUS" default:"memory" help:"How instances tell each other to look again: memory (one instance), embedded (a NATS server inside this process), or nats://host:port[,nats://…] (a NATS cluster)."`
	BusPrefix         string   `name:"bus-prefix" env:"SWITCHBOARD_BUS_PREFIX" default:"switchboard" help:"First token of this deployment's NATS subjects."`
	NATSListen        string   `name:"nats-listen" env:"SWITCHBOARD_NATS_LISTEN" help:"With --bus embedded: host:port where the embedded NATS server accepts clients (default: none, in-process only)."`
	NATSClusterListen string   `name:"nats-cluster-listen" env:"SWITCHBOARD_NATS_CLUSTER_LISTEN" help:"With --bus embedded: host:port where the embedded NATS server accepts routes from the other instances' servers."`
	NATSRoutes        []string `name:"nats-routes" env:"SWITCHBOARD_NATS_ROUTES" help:"With --bus embedded: nats-route://host:port of the other instances' embedded servers (comma-separated)."`

	Retention      retentionFlag `name:"retention" env:"SWITCHBOARD_RETENTION" default:"0" help:"Delete tasks that finished (completed, failed, canceled, rejected) longer ago than this, with their events, deliveries and push configurations: days (30d) or a duration (720h); 0 keeps them forever."`
	AuditRetention retentionFlag `name:"audit-retention" env:"SWITCHBOARD_AUDIT_RETENTION" default:"90d" help:"Delete audit log entries older than this: days (90d) or a duration (2160h); 0 keeps them forever. Apart from --retention, the tasks'."`
	AuditLog       string        `name:"audit-log" env:"SWITCHBOARD_AUDIT_LOG" placeholder:"stdout|FILE" help:"Also write every audit log entry as a JSON line: to stdout, or appended to FILE (made 0600). The entries stay in the database either way."`

	Domains     []string `name:"domain" env:"SWITCHBOARD_DOMAIN" placeholder:"NAME" help:"Serve HTTPS for these names, with certificates obtained and renewed over ACME (Let's Encrypt by default; HTTP-01 on --addr and TLS-ALPN-01 on --https-addr, so ports 80 and 443 must reach this server). The first is the default --public-url (https://NAME). Certificates and keys live in the database, keys sealed; every instance of a cluster serves the same ones."`
	ACMEEmail   string   `name:"acme-email" env:"SWITCHBOARD_ACME_EMAIL" help:"Contact address of the ACME account (the CA may write about expiring certificates or its terms); default: none."`
	ACMECA      string   `name:"acme-ca" env:"SWITCHBOARD_ACME_CA" default:"${default_acme_ca}" help:"ACME directory URL of the CA (e.g. Let's Encrypt's staging CA while testing: https://acme-staging-v02.api.letsencrypt.org/directory)."`
	ACMECARoot  string   `name:"acme-ca-root" env:"SWITCHBOARD_ACME_CA_ROOT" type:"path" help:"PEM file of the roots to trust for the CA's own HTTPS (a private or test CA); default: the system's."`
	HTTPSAddr   string   `name:"https-addr" env:"SWITCHBOARD_HTTPS_ADDR" default:"${default_https_addr}" help:"Listen address of HTTPS, with --domain or --tls-cert."`
	TLSCert     string   `name:"tls-cert" env:"SWITCHBOARD_TLS_CERT" type:"path" help:"Serve HTTPS with this certificate (PEM, the chain after it), taken again when the file changes, with no restart (not with --domain)."`
	TLSKey      string   `name:"tls-key" env:"SWITCHBOARD_TLS_KEY" type:"path" help:"The private key of --tls-cert (PEM)."`
	DNSResolver string   `name:"dns-resolver" env:"SWITCHBOARD_DNS_RESOLVER" placeholder:"HOST:PORT" help:"DNS server that answers the checks of agents' domains (a name gets a certificate only if it resolves to this deployment's addresses); default: the system's resolver."`

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
	if c.MaxDomains < 0 {
		return fmt.Errorf("--max-domains-per-account: want 0 or more, got %d", c.MaxDomains)
	}
	defer gcfloor.Start(uint64(c.GCHeadroom) << 20)()
	logger := newLogger(c.LogLevel, c.LogFormat)
	if c.PprofAddr != "" {
		_, stop, err := servePprof(c.PprofAddr, logger)
		if err != nil {
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		defer stop()
	}
	return runServer(ctx, server.New(c.config(cli), logger))
}

// runServer runs s until ctx ends (SIGINT or SIGTERM), or until one of its
// background loops cannot go on; then it closes s. The second ends the
// process non-zero, so that its supervisor starts it again.
func runServer(ctx context.Context, s *server.Server) error {
	if err := s.Run(ctx); err != nil {
		_ = s.Close()
		return err
	}
	select {
	case <-ctx.Done():
		s.Logger.Info("shutting down")
		return s.Close()
	case err := <-s.Fatal():
		return errors.Join(fmt.Errorf("stopped: %w", err), s.Close())
	}
}

// config is the server.Config the flags make.
func (c *ServeCmd) config(cli *CLI) server.Config {
	return server.Config{
		Version: currentBuild().Version, Addr: c.Addr, DataDir: cli.Data, PublicURL: c.PublicURL, OwnerToken: cli.OwnerToken,
		MaxBody: c.MaxBody, RatePerMinute: c.RatePerMinute, DefaultAgent: c.DefaultAgent, MaxDomainsPerAccount: noneAllowed(c.MaxDomains),
		TrustForwarded: c.TrustForwarded, TrustedProxies: c.TrustedProxies.prefixes, ShutdownTimeout: c.ShutdownTimeout, Metrics: c.Metrics, MetricsAddr: c.MetricsAddr, MCPOff: !c.MCP,
		OTLPEndpoint: c.OTLPEndpoint, TraceSample: c.TraceSample,
		BodyTimeout: c.BodyTimeout, MaxUnauthConns: c.MaxUnauthConns, SecretKey: c.SecretKey,
		DeliveryDeadline: c.DeliveryDeadline, BlockingTimeout: c.BlockingTimeout, Heartbeat: c.Heartbeat,
		RequireApproval: c.RequireApproval, ReconnectGrace: graceOrNone(c.ReconnectGrace),
		WebhookTimeout: c.WebhookTimeout, AllowPrivateNetworks: c.AllowPrivateNetworks,
		Push:     push.SendConfig{Timeout: c.PushTimeout, MaxAttempts: c.PushMaxAttempts, MaxAge: c.PushMaxAge, MaxBackoff: c.PushMaxBackoff},
		Database: c.Database, DatabaseMaxConns: c.DatabaseMaxConns, SQLiteSyncFull: c.SQLiteSynchronous == "full", Bus: c.Bus, BusPrefix: c.BusPrefix,
		NATS:           natsbus.ServerOptions{Listen: c.NATSListen, ClusterListen: c.NATSClusterListen, Routes: c.NATSRoutes},
		Retention:      time.Duration(c.Retention),
		AuditRetention: auditRetention(c.AuditRetention), AuditLog: c.AuditLog,
		MaxOpenTasks: noLimit(c.MaxOpenTasks), MaxPeerBytes: noLimit(c.MaxPeerBytes),
		HTTPSAddr: c.HTTPSAddr, TLSCertFile: c.TLSCert, TLSKeyFile: c.TLSKey,
		ACME: certs.Config{Domains: c.Domains, Email: c.ACMEEmail, CA: c.ACMECA, CARootFile: c.ACMECARoot, DNSResolver: c.DNSResolver},
	}
}

// serveVars are the defaults of serve's flags that come from the packages
// they configure.
func serveVars() kong.Vars {
	return kong.Vars{
		"default_max_open_tasks":  strconv.Itoa(relay.DefaultMaxOpenTasksPerPeer),
		"default_max_peer_bytes":  strconv.FormatInt(relay.DefaultMaxPeerBytes, 10),
		"default_gc_headroom_mib": strconv.Itoa(gcfloor.DefaultHeadroom >> 20),
		"default_max_domains":     strconv.Itoa(httpapi.DefaultMaxDomainsPerAccount),
		"default_acme_ca":         certs.DefaultCA,
		"default_https_addr":      server.DefaultHTTPSAddr,
	}
}

// noLimit turns a flag's 0, "no limit", into server.Config's: negative (a zero
// Config field means the default).
func noLimit[T int | int64](n T) T {
	if n == 0 {
		return -1
	}
	return n
}

// noneAllowed turns a flag's 0, "none allowed", into server.Config's:
// negative (a zero Config field means the default).
func noneAllowed(n int) int {
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

// graceOrNone turns serve's --reconnect-grace into
// server.Config.ReconnectGrace, where 0 means the default: a flag of 0 is
// no grace.
func graceOrNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// auditRetention is the server's audit retention of the flag: 0 keeps
// entries forever (the server's negative).
func auditRetention(r retentionFlag) time.Duration {
	if r == 0 {
		return -1
	}
	return time.Duration(r)
}
