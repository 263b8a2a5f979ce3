package a2aedge

import (
	"context"
	"net/http"
	"slices"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
)

// rpcTarget is what an A2A address serves: one agent ({base}/a/{handle},
// or the root for the default agent), or a community ({base}/c/{name}),
// whose calls discovery routes to one of its members.
type rpcTarget struct {
	agent     *switchboard.Agent
	community *switchboard.Community
	addr      string // the address URL the call reached
}

// rpcCaller is an authenticated caller of an address: the peer it is, and
// how a long stream checks that its credential still opens the address.
type rpcCaller struct {
	peer switchboard.Peer
	// revoked is the subject notified when the credential may have been
	// revoked, or its holder's right to call changed.
	revoked string
	// valid reports whether the credential still opens the address. It
	// reports true when it cannot tell (the store failed): the keep-alive
	// checks again.
	valid func(ctx context.Context) bool
}

// authenticateCaller returns the caller the request's bearer token names,
// if it opens the address: a peer token of the agent (or of the
// community), or the agent token of an approved agent that shares a
// community with the agent (or is a member of the community).
func (s *Edge) authenticateCaller(r *http.Request, t rpcTarget) (rpcCaller, error) {
	secret := httpapi.BearerToken(r)
	if secret == "" {
		return rpcCaller{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "send Authorization: Bearer <token>")
	}
	hash := switchboard.HashToken(secret)
	tok, err := s.Tokens.FindTokenByHash(r.Context(), hash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return rpcCaller{}, httpapi.ErrBadToken
	} else if err != nil {
		return rpcCaller{}, err
	}
	var c rpcCaller
	switch {
	case tok.Kind == switchboard.TokenPeer && t.agent != nil && tok.AgentID == t.agent.ID:
		c = s.peerCaller(tok, hash, t.agent)
	case tok.Kind == switchboard.TokenPeer && t.community != nil && tok.Community == t.community.Name:
		c = s.communityCaller(tok, hash)
	case tok.Kind == switchboard.TokenAgent:
		c, err = s.agentCaller(r.Context(), tok, hash, t)
		if err != nil {
			return rpcCaller{}, err
		}
	default:
		return rpcCaller{}, httpapi.ErrBadToken
	}
	if tok.Kind == switchboard.TokenPeer {
		s.usage.Touch(r.Context(), hash)
	}
	httpapi.MarkAuthenticated(r)
	return c, nil
}

// peerCaller is the holder of a peer token of the agent.
func (s *Edge) peerCaller(tok *switchboard.Token, hash string, agent *switchboard.Agent) rpcCaller {
	return rpcCaller{
		peer:    switchboard.Peer{AgentID: agent.ID, ID: tok.PeerID, Label: tok.Label},
		revoked: switchboard.TokensSubject(agent.ID),
		valid: func(ctx context.Context) bool {
			tok, ok := s.StillActive(ctx, hash)
			if !ok || tok == nil {
				return ok
			}
			if tok.Kind != switchboard.TokenPeer || tok.AgentID != agent.ID {
				return false
			}
			g, err := s.Agents.FindAgentByID(ctx, agent.ID)
			return (err != nil && switchboard.ErrorCode(err) != switchboard.ENOTFOUND) || (err == nil && !g.AccountDisabled)
		},
	}
}

// communityCaller is the holder of a peer token of the community.
func (s *Edge) communityCaller(tok *switchboard.Token, hash string) rpcCaller {
	name := tok.Community
	return rpcCaller{
		peer:    switchboard.Peer{ID: tok.PeerID, Label: tok.Label, Kind: switchboard.PeerCommunity},
		revoked: switchboard.CommunityTokensSubject(name),
		valid: func(ctx context.Context) bool {
			tok, ok := s.StillActive(ctx, hash)
			return ok && (tok == nil || (tok.Kind == switchboard.TokenPeer && tok.Community == name))
		},
	}
}

// networkAgentCaller is, with the network, an agent of the deployment
// calling another's address (or its community's) with its own agent
// token: both must be approved and of enabled accounts, the sender not the
// target itself, and the two share a community (the sender be a member of
// the community), as for work sent by name on the network.
func (s *Edge) networkAgentCaller(ctx context.Context, tok *switchboard.Token, hash string, t rpcTarget) (rpcCaller, error) {
	allowed := func(ctx context.Context, sender, target *switchboard.Agent) (bool, error) {
		if sender.AccountDisabled || !sender.Approved {
			return false, nil
		}
		if target != nil {
			if sender.ID == target.ID || target.AccountDisabled || !target.Approved {
				return false, nil
			}
			return s.Network.ShareCommunity(ctx, sender.ID, target.ID)
		}
		in, err := s.Network.AgentCommunities(ctx, sender.ID)
		return slices.Contains(in[sender.ID], t.community.Name), err
	}
	sender, err := s.Agents.FindAgentByID(ctx, tok.AgentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return rpcCaller{}, httpapi.ErrBadToken
	} else if err != nil {
		return rpcCaller{}, err
	}
	if ok, err := allowed(ctx, sender, t.agent); err != nil {
		return rpcCaller{}, err
	} else if !ok {
		return rpcCaller{}, httpapi.ErrBadToken
	}
	peer := network.AgentPeer(sender)
	if t.agent != nil {
		peer = network.PeerOf(sender, t.agent)
	}
	return rpcCaller{
		peer:    peer,
		revoked: switchboard.AgentChangeSubject(sender.ID),
		valid: func(ctx context.Context) bool {
			tok, ok := s.StillActive(ctx, hash)
			if !ok || tok == nil {
				return ok
			}
			g, err := s.Agents.FindAgentByID(ctx, sender.ID)
			if err != nil {
				return switchboard.ErrorCode(err) != switchboard.ENOTFOUND
			}
			var target *switchboard.Agent
			if t.agent != nil {
				// The target as it is now: unapproved, disabled or gone
				// since, it ends the caller's streams.
				if target, err = s.Agents.FindAgentByID(ctx, t.agent.ID); err != nil {
					return switchboard.ErrorCode(err) != switchboard.ENOTFOUND
				}
			}
			ok, err = allowed(ctx, g, target)
			return tok.Kind == switchboard.TokenAgent && tok.AgentID == sender.ID && (ok || err != nil)
		},
	}, nil
}
