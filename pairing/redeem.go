package pairing

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Token is a redeemed approval: the peer token's secret, shown once.
type Token struct {
	Secret string
	Label  string
	// Replaced reports whether the token replaced the one a re-pairing
	// request presented.
	Replaced bool
}

// Redeem answers a client's poll with a device code at the agent's
// address. The error is an *Error for every OAuth answer
// (authorization_pending, slow_down, access_denied, expired_token,
// invalid_grant) and another error only when the store failed.
func (s *Service) Redeem(ctx context.Context, agent *switchboard.Agent, deviceCode, requester string) (*Token, error) {
	if ok, retry, _ := s.Polls.Allow(ctx, "pairing-poll/"+requester); !ok {
		return nil, &Error{Code: ErrSlowDown, Description: "too many token requests from your address", Status: http.StatusTooManyRequests, RetryAfter: max(retry, time.Second)}
	}
	if deviceCode == "" {
		return nil, oauthError(ErrInvalidRequest, "device_code is required")
	}
	p, poll, err := s.Store.PollPairing(ctx, agent.ID, switchboard.HashToken(deviceCode), s.cfg.Now().UTC())
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, oauthError(ErrInvalidGrant, "the device code is unknown, used, or expired long ago")
	} else if err != nil {
		return nil, err
	}
	switch poll {
	case switchboard.PollPending:
		return nil, oauthError(ErrAuthorizationPending, "the request waits for approval")
	case switchboard.PollSlowDown:
		return nil, oauthError(ErrSlowDown, "polled too soon: wait at least %d seconds between polls", int(p.Interval/time.Second))
	case switchboard.PollDenied:
		return nil, oauthError(ErrAccessDenied, "the request was denied")
	case switchboard.PollExpired:
		return nil, oauthError(ErrExpiredToken, "the device code expired; start again")
	}
	tok, err := s.issue(ctx, agent, p)
	if err != nil {
		// The request was redeemed as it was read: put it back, so that the
		// client's next poll tries again rather than finding it gone.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if rerr := s.Store.RestorePairing(rctx, p); rerr != nil {
			s.Logger.Warn("put back a pairing whose token could not be issued", "agent_id", agent.ID, "err", rerr)
		}
		return nil, err
	}
	s.Logger.Info("pairing redeemed", "agent_id", agent.ID, "label", tok.Label, "replaced", tok.Replaced)
	return tok, nil
}

// issue issues the approved request's peer token. A re-pairing approved
// under the label of the token it presented replaces that token, if it is
// still active on that label; otherwise (rotated or revoked meanwhile, or a
// label taken since the approval) the token gets a fresh label.
func (s *Service) issue(ctx context.Context, agent *switchboard.Agent, p *switchboard.Pairing) (*Token, error) {
	scope := switchboard.Token{AgentID: agent.ID} // as the owner API issues them
	subject := switchboard.TokensSubject(agent.ID)
	label := p.Label
	if p.ReplacesLabel != "" && p.ReplacesLabel == label {
		if old, err := s.Tokens.FindTokenByHash(ctx, p.ReplacesHash); err == nil && old.Label == label && old.AgentID == agent.ID {
			secret, _, err := s.Peers.Issue(ctx, scope, label, true, subject)
			if err != nil {
				return nil, err
			}
			return &Token{Secret: secret, Label: label, Replaced: true}, nil
		}
	}
	for attempt := 0; attempt < 5; attempt++ {
		secret, _, err := s.Peers.Issue(ctx, scope, label, false, subject)
		if err == nil {
			return &Token{Secret: secret, Label: label}, nil
		}
		if switchboard.ErrorCode(err) != switchboard.ECONFLICT {
			return nil, err
		}
		if label, err = s.freeLabel(ctx, agent, LabelBase(label, "")); err != nil {
			return nil, err
		}
	}
	return nil, switchboard.Errorf(switchboard.ECONFLICT, "no free label for the token")
}
