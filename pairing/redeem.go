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
	tok, err := s.redeem(ctx, agent, p)
	if err != nil {
		return nil, err
	}
	s.Logger.Info("pairing redeemed", "agent_id", agent.ID, "label", tok.Label, "replaced", tok.Replaced)
	return tok, nil
}

// redeem redeems the approved request with its peer token, the request's
// deletion and the token's creation in one store transaction. A
// re-pairing approved under the label of the token it presented replaces
// that token, if it is still active on that label then; otherwise
// (rotated or revoked meanwhile) the token gets a fresh label, as it does
// when another token took the approved label since the approval. Of two
// redemptions at once, the loser answers invalid_grant.
func (s *Service) redeem(ctx context.Context, agent *switchboard.Agent, p *switchboard.Pairing) (*Token, error) {
	label := p.Label
	replace := p.ReplacesLabel != "" && p.ReplacesLabel == label
	for attempt := 0; attempt < 5; attempt++ {
		if !switchboard.ValidLabel(label) {
			return nil, switchboard.Errorf(switchboard.EINVALID, "the approved label %q is not a valid label", label)
		}
		secret, hash := switchboard.NewToken(switchboard.TokenPeer)
		tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: agent.ID, Label: label} // as the owner API issues them
		err := s.Store.RedeemPairing(ctx, agent.ID, p.DeviceHash, tok, replace, s.cfg.Now().UTC())
		if err == nil {
			if replace {
				s.Peers.Replaced(ctx, switchboard.TokensSubject(agent.ID)) // the old token's streams end
			}
			return &Token{Secret: secret, Label: label, Replaced: replace}, nil
		}
		switch switchboard.ErrorCode(err) {
		case switchboard.ENOTFOUND:
			return nil, oauthError(ErrInvalidGrant, "the device code is unknown, used, or expired long ago")
		case switchboard.ECONFLICT:
			// The presented token is gone from the label, or another
			// token took the label: a fresh one, never a swap.
			replace = false
			if label, err = s.freeLabel(ctx, agent, LabelBase(label, "")); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	return nil, switchboard.Errorf(switchboard.ECONFLICT, "no free label for the token")
}
