package server

import (
	"context"
	"crypto/x509"
	"net/netip"
	"time"

	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/push"
)

// Config is everything a server needs to start. Zero values mean defaults.
type Config struct {
	// Version is the running version: in the User-Agent of outbound
	// requests, the cards and switchboard_build_info.
	Version string

	// Addr is the plain HTTP listener's address (default DefaultAddr;
	// with ACME.Domains, DefaultACMEHTTPAddr).
	Addr    string
	DataDir string
	// PublicURL is the base URL the world reaches the server at (default:
	// each request's; with ACME.Domains, https:// and the first domain).
	PublicURL     string
	OwnerToken    string // preset operator token; empty: generate one at first start
	MaxBody       int64
	RatePerMinute int
	DefaultAgent  string
	// MaxDomainsPerAccount bounds the agents of one account (not the
	// operator's) that hold a domain (httpapi.Config.MaxDomainsPerAccount:
	// 0 means httpapi.DefaultMaxDomainsPerAccount; a negative value
	// allows none).
	MaxDomainsPerAccount int
	TrustForwarded       bool
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
	// SQLiteSyncFull syncs SQLite's log at every commit, so that an
	// acknowledged task survives a power loss
	// (sqlstore.SQLiteOptions.SyncFull).
	SQLiteSyncFull bool
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

	// AuditRetention is how long the audit log's entries are kept (0:
	// audit.DefaultRetention; negative: forever); apart from Retention,
	// the tasks'.
	AuditRetention time.Duration
	// AuditLog, if set, also writes every audit entry as a JSON line:
	// "stdout", or the path of a file it appends to.
	AuditLog string

	// Metrics serves GET /metrics on the main listener.
	Metrics bool
	// MCPOff turns off every MCP route: agents' {address}/mcp and the MCP
	// token routes answer 404.
	MCPOff bool
	// MetricsAddr is the address of a listener of its own for /metrics,
	// /healthz and /readyz; empty: none.
	MetricsAddr string

	// OTLPEndpoint is the OTLP/HTTP base URL traces are exported to
	// (tracing.Config.Endpoint); empty: tracing off, at no cost.
	OTLPEndpoint string
	// TraceSample is the share of the traces starting here that are kept,
	// used as it is (serve's --trace-sample defaults to
	// tracing.DefaultSampleRatio); a peer's or a stored trace context keeps
	// its own decision.
	TraceSample float64
	// TraceBatchTimeout is how long spans wait to be exported together
	// (0: the SDK's 5 s; tests shorten it).
	TraceBatchTimeout time.Duration

	// HTTPS. With ACME.Domains (certificates obtained over ACME) or
	// TLSCertFile and TLSKeyFile (the operator's own), the server serves
	// HTTPS on HTTPSAddr (default DefaultHTTPSAddr), and the plain
	// listener answers ACME challenges, serves loopback clients and
	// redirects everyone else to https.
	HTTPSAddr string
	// ACME configures automatic certificates; its Domains turn them on.
	ACME certs.Config
	// TLSCertFile and TLSKeyFile are a certificate and its key in PEM
	// files, taken again when they change.
	TLSCertFile, TLSKeyFile string
	// ReachPort is the port the public addresses' HTTPS is dialed on when
	// their reachability is checked (package reach; 0: 443). Tests.
	ReachPort int
	// ReachRoots, if set, are the roots the certificates of the public
	// addresses are checked against (tests); nil: the system's.
	ReachRoots *x509.CertPool
	// AgentDomain reports whether an agent of the deployment holds a
	// domain name, for the certificates of agents' domains, obtained on
	// demand; nil: the store's answer.
	AgentDomain func(ctx context.Context, name string) (bool, error)
	// EarlyWriteAfter is how long a task sent before it is written waits
	// for its first answer before it is written as created
	// (relay.Service.EarlyWriteAfter); 0: the relay's default. Tests.
	EarlyWriteAfter time.Duration
	// PairingInterval is the interval between a pairing client's polls
	// the server asks for (pairing.Config.Interval, whole seconds on the
	// wire); 0: pairing.DefaultInterval. Tests.
	PairingInterval time.Duration
	// HubPoll is how often a connected agent's queued work is looked for
	// in the store without a hint over the bus (hub.Config.Poll); 0:
	// hub.DefaultPoll. Tests.
	HubPoll time.Duration
}
