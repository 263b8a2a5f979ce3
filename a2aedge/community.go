package a2aedge

import (
	"context"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2arpc"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// A community's address, {base}/c/{name}, is an A2A address like an
// agent's: the same landing page, cards (1.0 and 0.3) and JSON-RPC
// endpoint. Its card's skills are the union of those of the members
// discovery could choose now. A message that starts a task is routed by
// discovery (the skill from the message's or the request's metadata
// "skill"); the peer then follows its task at the same address, as on any.

// communityCardCache is the Cache-Control of a community's card: it
// changes as members come and go.
const communityCardCache = "public, max-age=30"

// handleCommunityAddress serves a community's address: the landing page on
// GET, A2A JSON-RPC on POST.
func (s *Edge) handleCommunityAddress(w http.ResponseWriter, r *http.Request) {
	c, ok := s.communityFromPath(w, r)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		card, err := s.communityAgent(r.Context(), c)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		s.serveLandingAt(w, r, card, s.CommunityURL(r, c.Name), nil)
	case http.MethodPost:
		s.serveRPC(w, r, rpcTarget{community: c, addr: s.CommunityURL(r, c.Name)})
	case http.MethodOptions:
		httpapi.SetCORS(w)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, ownerapi.Error{Error: "method not allowed"})
	}
}

// handleCommunityCardV1 serves a community's 1.0 card, or its 0.3 card to
// a client that asks for A2A-Version 0.3.
func (s *Edge) handleCommunityCardV1(w http.ResponseWriter, r *http.Request) {
	card, addr, ok := s.communityCardRequest(w, r)
	if !ok {
		return
	}
	w.Header().Set("Vary", "A2A-Version")
	s.VaryForwarded(w)
	if v, _ := a2arpc.RequestedVersion(r); strings.HasPrefix(v, "0.3") {
		serveCardFor(w, r, s.cardV03(card, addr, false, nil), communityCardCache)
		return
	}
	serveCardFor(w, r, s.cardV1(card, addr, false, nil), communityCardCache)
}

// handleCommunityCardV03 serves a community's 0.3 card.
func (s *Edge) handleCommunityCardV03(w http.ResponseWriter, r *http.Request) {
	card, addr, ok := s.communityCardRequest(w, r)
	if ok {
		s.VaryForwarded(w)
		serveCardFor(w, r, s.cardV03(card, addr, false, nil), communityCardCache)
	}
}

func (s *Edge) communityCardRequest(w http.ResponseWriter, r *http.Request) (*switchboard.Agent, string, bool) {
	if r.Method == http.MethodOptions {
		httpapi.SetCORS(w)
		w.WriteHeader(http.StatusNoContent)
		return nil, "", false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, ownerapi.Error{Error: "method not allowed"})
		return nil, "", false
	}
	c, ok := s.communityFromPath(w, r)
	if !ok {
		return nil, "", false
	}
	card, err := s.communityAgent(r.Context(), c)
	if err != nil {
		s.WriteError(w, r, err)
		return nil, "", false
	}
	return card, s.CommunityURL(r, c.Name), true
}

// communityFromPath finds the community named by the {name} of the path;
// it answers 404 itself when there is none. The
// community's member count is not read (Members is 0).
func (s *Edge) communityFromPath(w http.ResponseWriter, r *http.Request) (*switchboard.Community, bool) {
	c, err := s.communities(r.Context(), r.PathValue("name"))
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no community at this address"})
		return nil, false
	} else if err != nil {
		s.WriteError(w, r, err)
		return nil, false
	}
	return c, true
}

// communityAgent returns what a community's card says, in the shape of an
// agent's: its name and the skills of the members discovery could choose
// now.
func (s *Edge) communityAgent(ctx context.Context, c *switchboard.Community) (*switchboard.Agent, error) {
	skills, err := s.Network.CommunitySkills(ctx, c.Name)
	if err != nil {
		return nil, err
	}
	return &switchboard.Agent{
		Handle: c.Name, Name: "Community " + c.Name, Version: "1.0.0", Skills: skills,
		Description: "A community of A2A agents reachable through Switchboard: each task goes to one member that can take it now, chosen by skill (message metadata \"skill\"); with \"wake_sleepers\": true in the metadata, when none is live, to one that sleeps and can be woken.",
	}, nil
}

// routeSend returns the agent a send goes to: the address's agent or, at a
// community's address, the agent of the task a message continues, or the
// member discovery chooses (ENOAGENT when there is none).
func (s *Edge) routeSend(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) (*switchboard.Agent, error) {
	if c.agent != nil {
		return c.agent, nil
	}
	if p.Message == nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "message is required")
	}
	if id := p.Message.TaskID; id != "" {
		return s.Network.TaskAgent(ctx, c.peer, id)
	}
	q := switchboard.DiscoveryQuery{Communities: []string{c.community.Name}, Skill: skillOf(p), Sleepers: wakeSleepersOf(p)}
	if c.peer.Kind == switchboard.PeerAgent {
		q.SenderID = c.peer.ID
	}
	cand, err := s.Network.DiscoverFor(ctx, c.peer.Key(), p.Message.ID, q)
	if err != nil {
		return nil, err
	}
	return cand.Agent, nil
}

// skillOf returns the skill a send asks for: "skill" in the message's
// metadata, or else in the request's.
func skillOf(p *a2a.SendMessageRequest) string {
	for _, meta := range []map[string]any{p.Message.Metadata, p.Metadata} {
		if v, ok := meta["skill"].(string); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// wakeSleepersOf reports whether a send at a community's address allows
// discovery to choose an agent that sleeps (network.Service.Discover):
// "wake_sleepers": true in the message's metadata or the request's.
func wakeSleepersOf(p *a2a.SendMessageRequest) bool {
	for _, meta := range []map[string]any{p.Message.Metadata, p.Metadata} {
		switch v := meta["wake_sleepers"].(type) {
		case bool:
			if v {
				return true
			}
		case string:
			if strings.EqualFold(strings.TrimSpace(v), "true") {
				return true
			}
		}
	}
	return false
}

// cancelTask cancels a task the caller may see, on the agent it is on.
func (s *Edge) cancelTask(ctx context.Context, c *rpcCall, id a2a.TaskID) (*switchboard.Task, error) {
	if t, ok, err := s.passCancel(ctx, c, id); ok {
		return t, err
	}
	agent := c.agent
	if agent == nil {
		if id == "" {
			return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
		}
		g, err := s.Network.TaskAgent(ctx, c.peer, id)
		if err != nil {
			return nil, err
		}
		agent = g
	}
	return s.Tasks.CancelTask(ctx, agent, c.peer, id)
}
