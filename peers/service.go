package peers

import (
	"context"
	"log/slog"

	"github.com/switchboard-dev/switchboard"
)

// Service issues and revokes peer tokens.
type Service struct {
	tokens switchboard.TokenStore
	bus    switchboard.Bus
	log    *slog.Logger
}

// New returns a Service over the token store and the bus (nil: no hints).
func New(tokens switchboard.TokenStore, bus switchboard.Bus, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{tokens: tokens, bus: bus, log: log}
}

// Issue creates a peer token of an address, an agent's or a community's:
// scope holds its AgentID or Community (and the issuing AccountID), and
// subject is the bus subject of the address's tokens
// (switchboard.TokensSubject or CommunityTokensSubject). It returns the
// secret, to show once, and the token as stored. EINVALID for a bad
// label; ECONFLICT when an active token has the label and rotate is
// false; with rotate, the token replaces it and the old one's streams end.
func (s *Service) Issue(ctx context.Context, scope switchboard.Token, label string, rotate bool, subject string) (string, *switchboard.Token, error) {
	if !switchboard.ValidLabel(label) {
		return "", nil, switchboard.Errorf(switchboard.EINVALID, "label must be 1-%d characters of A-Z a-z 0-9 _ -", switchboard.MaxLabelLen)
	}
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	tok := &scope
	tok.Hash, tok.Kind, tok.Label = hash, switchboard.TokenPeer, label
	if err := s.tokens.CreateToken(ctx, tok, rotate); err != nil {
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			err = switchboard.Errorf(switchboard.ECONFLICT, "an active token labelled %q exists; revoke it or rotate it", label)
		}
		return "", nil, err
	}
	if rotate {
		s.notify(ctx, subject) // the old token's streams end
	}
	return secret, tok, nil
}

// Revoke revokes the active peer token of f labelled label and ends its
// streams on every instance (subject); ENOTFOUND when there is none.
func (s *Service) Revoke(ctx context.Context, f switchboard.TokenFilter, label, subject string) error {
	f.Label = &label
	n, err := s.tokens.RevokeTokens(ctx, f)
	if err != nil {
		return err
	}
	if n == 0 {
		return switchboard.Errorf(switchboard.ENOTFOUND, "no active token labelled %q", switchboard.Truncate(label, 64))
	}
	s.notify(ctx, subject)
	return nil
}

// Replaced ends the streams of a token that a store operation other than
// Issue replaced (a re-pairing's redemption, which rotates the token in
// the request's transaction) on every instance: it hints the address's
// tokens subject, as Issue does for a rotation.
func (s *Service) Replaced(ctx context.Context, subject string) { s.notify(ctx, subject) }

// notify hints the subject; a Service without a bus (an API server built
// alone, in its tests) hints nothing, as httpapi's own notify.
func (s *Service) notify(ctx context.Context, subject string) {
	if s.bus == nil {
		return
	}
	if err := s.bus.Notify(ctx, subject); err != nil {
		s.log.Warn("notify", "subject", subject, "err", err)
	}
}
