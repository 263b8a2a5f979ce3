package pairing

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/peers"
)

// Defaults for Config fields left at zero.
const (
	// DefaultTTL is how long a request's codes last.
	DefaultTTL = 10 * time.Minute
	// DefaultInterval is the first interval between a client's polls.
	DefaultInterval = 5 * time.Second
	// DefaultMaxPending is the most requests an agent may have waiting.
	// At it, a request from an address that holds fewer of them than
	// another takes the place of that address's oldest (which expires),
	// so that a few addresses cannot keep every other out.
	DefaultMaxPending = 10
	// DefaultMaxPendingPerRequester is the most requests one address may
	// have waiting at one agent: its share of the agent's pending
	// requests.
	DefaultMaxPendingPerRequester = 3
	// DefaultMaxPerHour is the most requests an agent may receive an hour
	// from addresses that asked it already that hour; an address's first
	// request to the agent in an hour is taken even past it.
	DefaultMaxPerHour = 30
	// DefaultMaxPerRequester is the most requests one address may make in
	// RequesterWindow.
	DefaultMaxPerRequester = 5
	// RequesterWindow is the window of MaxPerRequester.
	RequesterWindow = 10 * time.Minute
	// DefaultPollsPerMinute is the most token requests one address should
	// be allowed a minute (the Polls limiter cmd builds).
	DefaultPollsPerMinute = 60
	// KeepExpired is how long an expired request is kept, so that its
	// polls answer expired_token rather than invalid_grant.
	KeepExpired = 24 * time.Hour
)

// Config holds the settings of the Service. Zero values mean defaults.
type Config struct {
	TTL                    time.Duration
	Interval               time.Duration
	MaxPending             int
	MaxPendingPerRequester int
	MaxPerHour             int
	MaxPerRequester        int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Deps are what the Service needs. Polls limits token requests per
// client address (DefaultPollsPerMinute in cmd); requests for codes are
// counted in the store (Config.MaxPerRequester).
type Deps struct {
	Store  switchboard.PairingStore
	Tokens switchboard.TokenStore
	Peers  *peers.Service
	Polls  switchboard.RateLimiter
	// OnRequest is told of each new request (the pairing_request wake);
	// optional. Its error is logged.
	OnRequest func(ctx context.Context, agent *switchboard.Agent, p *switchboard.Pairing) error
	Logger    *slog.Logger
}

// Service runs the device authorization grant for every agent.
type Service struct {
	Deps
	cfg Config
}

// New returns a Service.
func New(d Deps, cfg Config) *Service {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxPendingPerRequester <= 0 {
		cfg.MaxPendingPerRequester = DefaultMaxPendingPerRequester
	}
	if cfg.MaxPerHour <= 0 {
		cfg.MaxPerHour = DefaultMaxPerHour
	}
	if cfg.MaxPerRequester <= 0 {
		cfg.MaxPerRequester = DefaultMaxPerRequester
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{Deps: d, cfg: cfg}
}

// Request is a device authorization request as the client sent it.
type Request struct {
	ClientName, ClientID, CardURL string
	// Requester is the address the request came from.
	Requester string
	// Bearer is the token the request presented, if any: an active peer
	// token of the agent makes it a re-pairing.
	Bearer string
}

// Grant is the answer to a device authorization request.
type Grant struct {
	DeviceCode    string
	UserCode      string // as stored; FormatUserCode shows it
	ExpiresIn     time.Duration
	Interval      time.Duration
	ReplacesLabel string
}

// Enabled reports whether the agent takes pairing requests.
func Enabled(agent *switchboard.Agent) bool { return agent.Pairing != switchboard.PairingOff }

// Authorize takes a device authorization request for the agent. ENOTFOUND
// when pairing is off; EINVALID for a bad card URL; ERATELIMITED when the
// requester (req.Requester, its clientaddr.Key) or the agent is over a
// limit (switchboard.PairingLimits: each address has its own share).
func (s *Service) Authorize(ctx context.Context, agent *switchboard.Agent, req Request) (*Grant, error) {
	if !Enabled(agent) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "pairing is off for this agent")
	}
	if err := CheckCardURL(req.CardURL); err != nil {
		return nil, err
	}
	now := s.cfg.Now().UTC()
	if _, err := s.Store.DeletePairings(ctx, now.Add(-KeepExpired)); err != nil {
		s.Logger.Warn("sweep expired pairing requests", "err", err)
	}
	p := &switchboard.Pairing{AgentID: agent.ID, ClientName: CleanText(req.ClientName), ClientID: CleanText(req.ClientID),
		CardURL: req.CardURL, Requester: req.Requester, Interval: s.cfg.Interval, CreatedAt: now, ExpiresAt: now.Add(s.cfg.TTL)}
	if req.Bearer != "" {
		if tok, err := s.Tokens.FindTokenByHash(ctx, switchboard.HashToken(req.Bearer)); err == nil &&
			tok.Kind == switchboard.TokenPeer && tok.AgentID == agent.ID {
			p.ReplacesLabel, p.ReplacesHash = tok.Label, tok.Hash
		} // any other bearer is ignored: the request is a new pairing
	}
	var device string
	for attempt := 0; ; attempt++ {
		device = newDeviceCode()
		p.DeviceHash, p.UserCode = switchboard.HashToken(device), newUserCode()
		err := s.Store.CreatePairing(ctx, p, switchboard.PairingLimits{MaxPending: s.cfg.MaxPending,
			MaxPendingPerRequester: s.cfg.MaxPendingPerRequester, MaxPerHour: s.cfg.MaxPerHour,
			MaxPerRequester: s.cfg.MaxPerRequester, RequesterWindow: RequesterWindow})
		if err == nil {
			break
		}
		if switchboard.ErrorCode(err) != switchboard.ECONFLICT || attempt == 4 {
			return nil, err
		}
	}
	s.Logger.Info("pairing requested", "agent_id", agent.ID, "user_code", p.UserCode, "replaces", p.ReplacesLabel)
	if s.OnRequest != nil {
		if err := s.OnRequest(ctx, agent, p); err != nil {
			s.Logger.Warn("announce a pairing request", "agent_id", agent.ID, "err", err)
		}
	}
	return &Grant{DeviceCode: device, UserCode: p.UserCode, ExpiresIn: s.cfg.TTL, Interval: s.cfg.Interval,
		ReplacesLabel: p.ReplacesLabel}, nil
}

// WakeRequest returns the pairing_request wake of a new request: due at
// once, one per request, naming the claimed client (untrusted) and its
// code; the preview holds the other claims.
func WakeRequest(p *switchboard.Pairing) switchboard.WakeRequest {
	var preview []string
	if p.ClientID != "" {
		preview = append(preview, "client id: "+p.ClientID)
	}
	if p.CardURL != "" {
		preview = append(preview, "claimed card: "+p.CardURL)
	}
	if p.ReplacesLabel != "" {
		preview = append(preview, "replaces the active token "+p.ReplacesLabel)
	}
	from := p.ClientName
	if from == "" {
		from = p.ClientID
	}
	return switchboard.WakeRequest{AgentID: p.AgentID, ContextID: "pairing-" + p.UserCode, Kind: switchboard.WakePairingRequest,
		From: from, Preview: strings.Join(preview, "; ")}
}
