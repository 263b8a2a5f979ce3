package mcpauth

import (
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Defaults and bounds.
const (
	// CodeTTL is how long an authorization code may be redeemed.
	CodeTTL = 5 * time.Minute
	// CodeKeep is how long a code is kept after it expired, used or not:
	// a used code presented again within it ends the grant issued from
	// it (RFC 6749 section 4.1.2).
	CodeKeep = 24 * time.Hour
	// RegistrationsPerHour is the most clients one address may register
	// an hour: its share of MaxClients.
	RegistrationsPerHour = 10
	// MaxClients is the most registered clients (the default of
	// Config.MaxClients). At it, clients without a grant older than
	// PruneAfter, and unused ones older than PruneUnusedAfter, are
	// deleted; if that is not enough, the address that holds the most
	// clients gives up its oldest unused one, so that addresses each
	// within RegistrationsPerHour cannot keep another out.
	MaxClients = 100
	// PruneAfter is the age after which a client without a grant may be
	// deleted to make room.
	PruneAfter = time.Hour
	// PruneUnusedAfter is the age after which an unused client (no grant,
	// and no authorization code: no owner consented) may be deleted to
	// make room. A client registers right before it sends its user to
	// consent; twice the code's lifetime leaves time to sign in.
	PruneUnusedAfter = 2 * CodeTTL
	// MaxGrants is the most OAuth MCP tokens (labels "mcp-…") an agent,
	// or an account's account endpoint, may hold.
	MaxGrants = 20
	// Scope is the one scope granted.
	Scope = "inbox"
	// LabelPrefix starts the label of every MCP token OAuth issues.
	LabelPrefix = "mcp-"
	// AccessTTL is how long an MCP token OAuth issues opens the endpoint;
	// its client refreshes it with the grant's refresh token.
	AccessTTL = time.Hour
)

// Config holds the settings of the Service. Zero values mean defaults.
type Config struct {
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// RegistrationsPerHour bounds the clients one address registers an
	// hour (default RegistrationsPerHour).
	RegistrationsPerHour int
	// MaxClients bounds the registered clients (default MaxClients).
	MaxClients int
}

// Deps are what the Service needs.
type Deps struct {
	Store  switchboard.OAuthStore
	Tokens switchboard.TokenStore
	// Documents fetches the clients whose client_id is an https URL
	// (nil: NewDocuments with the guard closed).
	Documents *Documents
	Logger    *slog.Logger
}

// Service registers clients, issues authorization codes on consent, and
// exchanges codes and refresh tokens for MCP tokens.
type Service struct {
	Deps
	cfg Config
}

// New returns a Service.
func New(d Deps, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RegistrationsPerHour <= 0 {
		cfg.RegistrationsPerHour = RegistrationsPerHour
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = MaxClients
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Documents == nil {
		d.Documents = NewDocuments(DocumentOptions{Logger: d.Logger})
	}
	return &Service{Deps: d, cfg: cfg}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }
