package outpeer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/netguard"
)

// Limits of synced aliases.
const (
	// MaxPerAgent bounds the aliases of one agent.
	MaxPerAgent = 200
	// MaxTokenLen bounds a peer token.
	MaxTokenLen = 4096
	// DefaultTimeout bounds each call to a remote agent (its card, a send,
	// a poll).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBody bounds a remote agent's answer.
	DefaultMaxBody = 4 << 20
)

// Service keeps agents' synced aliases and makes the clients of the agents
// they name.
type Service struct {
	store     switchboard.OutboundPeerStore
	guard     netguard.Options  // immutable
	transport http.RoundTripper // immutable: front's guarded, bounded transport
	// Timeout bounds each call to a remote agent (default DefaultTimeout).
	Timeout time.Duration
}

// New returns the service; opts configure the requests to remote agents
// (the guard: private networks only where the operator opened it; a zero
// MaxBody is DefaultMaxBody, a zero HeaderTimeout is DefaultTimeout).
func New(store switchboard.OutboundPeerStore, opts front.ClientOptions) *Service {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.HeaderTimeout <= 0 {
		opts.HeaderTimeout = DefaultTimeout
	}
	return &Service{store: store, guard: opts.Guard, transport: front.NewTransport(opts), Timeout: DefaultTimeout}
}

// Check checks an alias, its URL and its token, and returns the URL as it
// is kept (no trailing slash). The URL is https, or plain http only where
// the guard is opened (serve --allow-private-networks); a private host
// only there too; no credentials, query or fragment.
func (s *Service) Check(alias, raw, token string) (string, error) {
	switch {
	case !switchboard.ValidAlias(alias):
		return "", switchboard.Errorf(switchboard.EINVALID, "alias %q: use 1 to %d of A-Z a-z 0-9 _ . -", clip(alias, 80), switchboard.MaxAliasLen)
	case strings.TrimSpace(token) == "":
		return "", switchboard.Errorf(switchboard.EINVALID, "token is required: the peer token the remote agent gave")
	case len(token) > MaxTokenLen || !printable(token):
		return "", switchboard.Errorf(switchboard.EINVALID, "token must be printable text of at most %d characters", MaxTokenLen)
	case len(raw) > front.MaxURLLen:
		return "", switchboard.Errorf(switchboard.EINVALID, "url is longer than %d characters", front.MaxURLLen)
	}
	u, err := url.Parse(raw)
	open := s.guard.AllowsPlainHTTP()
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "", switchboard.Errorf(switchboard.EINVALID, "url must be an https URL")
	case u.Scheme != "https" && !(open && u.Scheme == "http"):
		return "", switchboard.Errorf(switchboard.EINVALID, "url must be an https URL (plain http only on a private network: serve --allow-private-networks)")
	case u.User != nil:
		return "", switchboard.Errorf(switchboard.EINVALID, "url must not carry credentials: the token goes in \"token\"")
	case u.RawQuery != "" || u.Fragment != "":
		return "", switchboard.Errorf(switchboard.EINVALID, "url must have no query or fragment")
	case !open && netguard.PrivateHost(u.Hostname()):
		return "", switchboard.Errorf(switchboard.EINVALID, "url is on a private host (%s); it is allowed only on a private network: serve --allow-private-networks", u.Hostname())
	}
	return strings.TrimRight(raw, "/"), nil
}

// Put creates or replaces an agent's alias after Check, and reports
// whether it created it. An agent holds at most MaxPerAgent aliases.
func (s *Service) Put(ctx context.Context, agentID, alias, rawURL, token string) (*switchboard.OutboundPeer, bool, error) {
	u, err := s.Check(alias, rawURL, token)
	if err != nil {
		return nil, false, err
	}
	if _, err := s.store.FindOutboundPeer(ctx, agentID, alias); switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		all, err := s.store.FindOutboundPeers(ctx, agentID)
		if err != nil {
			return nil, false, err
		}
		if len(all) >= MaxPerAgent {
			return nil, false, switchboard.Errorf(switchboard.ECONFLICT, "the agent has %d synced aliases, the most it may hold: unsync one first", len(all))
		}
	} else if err != nil {
		return nil, false, err
	}
	p := &switchboard.OutboundPeer{AgentID: agentID, Alias: alias, URL: u, Token: strings.TrimSpace(token)}
	created, err := s.store.PutOutboundPeer(ctx, p)
	if err != nil {
		return nil, false, err
	}
	return p, created, nil
}

// Find returns one alias of an agent (its token opened, or Unreadable), or
// ENOTFOUND.
func (s *Service) Find(ctx context.Context, agentID, alias string) (*switchboard.OutboundPeer, error) {
	if !switchboard.ValidAlias(alias) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no alias %q", clip(alias, 80))
	}
	return s.store.FindOutboundPeer(ctx, agentID, alias)
}

// List returns an agent's aliases, ordered by alias.
func (s *Service) List(ctx context.Context, agentID string) ([]*switchboard.OutboundPeer, error) {
	return s.store.FindOutboundPeers(ctx, agentID)
}

// Delete deletes an agent's alias, or returns ENOTFOUND.
func (s *Service) Delete(ctx context.Context, agentID, alias string) error {
	if !switchboard.ValidAlias(alias) {
		return switchboard.Errorf(switchboard.ENOTFOUND, "no alias %q", clip(alias, 80))
	}
	return s.store.DeleteOutboundPeer(ctx, agentID, alias)
}

// printable reports whether s holds no control characters.
func printable(s string) bool {
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// clip cuts s to at most n bytes, for messages.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
