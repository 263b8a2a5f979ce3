package network

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Target says where an agent's work goes: to an agent by name, or to one
// discovery chooses.
type Target struct {
	// To names the receiver by its handle; a face reads an address URL
	// into its handle first (publicurl.HandleAt, address.go). Empty:
	// discovery chooses.
	To string
	// Community narrows the choice (or, with To, requires that both
	// agents are in it); empty: any community the sender is in.
	Community string
	// Skill, when set, is a card skill's id or tag the receiver must
	// offer.
	Skill string
	// WakeSleepers lets discovery choose an agent that sleeps and can be
	// woken when none is live or in its grace (see Discover).
	WakeSleepers bool

	messageID string // set by Send: a retry goes where the first went
}

// Choose returns the agent the sender's work goes to. By name, the
// receiver must share a community with the sender (the named one, if
// any), be approved and offer the skill; it need not be connected nor
// accept tasks now: the task waits for it, as work sent to its address
// does (a paused agent is offered it when it accepts tasks again). By
// discovery, see Discover: that chooses only agents that can take the
// work now. The sender must be approved (EFORBIDDEN). Nobody eligible is
// ENOAGENT, with a message that says why.
func (s *Service) Choose(ctx context.Context, sender *switchboard.Agent, t Target) (*switchboard.Agent, error) {
	if err := checkSender(sender); err != nil {
		return nil, err
	}
	var community string
	if t.Community != "" {
		n, err := NormalizeName(t.Community)
		if err != nil {
			return nil, err
		}
		community = n
		in, err := s.store.FindAgentCommunities(ctx, []string{sender.ID})
		if err != nil {
			return nil, err
		}
		if !slices.Contains(in[sender.ID], community) {
			return nil, switchboard.Errorf(switchboard.EFORBIDDEN, "agent %s is not in the community %q", sender.Handle, community)
		}
	}
	if strings.TrimSpace(t.To) != "" {
		return s.byName(ctx, sender, t.To, community, t.Skill)
	}
	q := switchboard.DiscoveryQuery{SenderID: sender.ID, Skill: strings.TrimSpace(t.Skill), Sleepers: t.WakeSleepers}
	if community != "" {
		q.Communities = []string{community}
	}
	c, err := s.DiscoverFor(ctx, AgentPeer(sender).Key(), t.messageID, q)
	if err != nil {
		return nil, err
	}
	return c.Agent, nil
}

// ChooseInCommunity is discovery for a peer of a community's address:
// any eligible member of the community (ENOAGENT when there is none);
// wakeSleepers as Target.WakeSleepers.
func (s *Service) ChooseInCommunity(ctx context.Context, community, skill string, wakeSleepers bool) (*switchboard.Candidate, error) {
	return s.Discover(ctx, switchboard.DiscoveryQuery{Communities: []string{community}, Skill: strings.TrimSpace(skill), Sleepers: wakeSleepers})
}

// Discover returns the agent q chooses: approved, accepting tasks, of an
// enabled account, in connector or webhook mode, in one of q's
// communities (or the sender's), offering q's skill, not the sender, and
// reachable: live ones first; when none is live, one whose socket dropped
// less than ReconnectGrace ago. Among those, the one with the fewest
// unfinished tasks; equal ones take turns. The liveness and the
// round-robin cursor of q are the Service's; the decision is taken from
// a view of the candidates (see view.go). Nobody eligible is ENOAGENT at
// once, with a message that names the gate that emptied the list.
//
// q.Sleepers is the sender's permission to wake an agent (wake_sleepers):
// when no one is live nor in its grace, discovery then chooses among the
// eligible inbox agents that can be woken (switchboard.Member.Wakeable),
// the one with the fewest unfinished tasks (equal ones take turns). Its
// task waits in its inbox and its wake goes out, as for any task sent to
// it. Webhook and front agents count as live already.
func (s *Service) Discover(ctx context.Context, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	now := s.Now()
	q.Liveness = s.Liveness(now)
	wake := q.Sleepers
	q.Sleepers = false
	key := questionKey(q)
	q.After = s.rr.cursor(key)
	c, err := s.fromView(ctx, key, q, now)
	if err == nil && c == nil {
		c, err = s.store.Discover(ctx, q)
	}
	if err == nil && c == nil && wake {
		sq := q
		sq.Sleepers, key = true, "sleepers|"+key
		sq.After = s.rr.cursor(key)
		c, err = s.store.Discover(ctx, sq)
	}
	if err != nil {
		return nil, err
	}
	if c == nil {
		q.Sleepers = wake
		return nil, s.noAgent(ctx, q)
	}
	s.rr.chose(key, c.Agent.ID)
	return c, nil
}

// questionKey names a discovery question for the round-robin cursor.
func questionKey(q switchboard.DiscoveryQuery) string {
	where := strings.Join(q.Communities, ",")
	if where == "" {
		where = "of:" + q.SenderID
	}
	return where + "|" + strings.ToLower(q.Skill)
}

// noAgent returns the ENOAGENT error of a query that found no one.
func (s *Service) noAgent(ctx context.Context, q switchboard.DiscoveryQuery) error {
	g, err := s.store.CountDiscoveryGates(ctx, q)
	if err != nil {
		return err
	}
	return switchboard.Errorf(switchboard.ENOAGENT, "%s", Reason(q, g))
}

// Reason says, in words, which gate of a discovery query left no one.
func Reason(q switchboard.DiscoveryQuery, g switchboard.DiscoveryGates) string {
	where := "a community you are in"
	if len(q.Communities) == 1 {
		where = fmt.Sprintf("community %q", q.Communities[0])
	}
	others := ""
	if q.SenderID != "" {
		others = " other"
	}
	switch {
	case g.Members == 0:
		return fmt.Sprintf("no member: no%s agent is in %s", others, where)
	case g.Approved == 0:
		return fmt.Sprintf("none approved: none of the %d%s members of %s is approved by the operator", g.Members, others, where)
	case g.Accepting == 0:
		return fmt.Sprintf("none accepting: none of the %d approved members of %s accepts tasks now", g.Approved, where)
	case g.Skilled == 0:
		return fmt.Sprintf("no skill: none of the %d members of %s that accept tasks offers the skill %q", g.Accepting, where, q.Skill)
	case g.Asleep > 0 && q.Sleepers:
		// Rare: Discover would have chosen one of them (one that went
		// away between the two reads).
		return fmt.Sprintf("none live: none of the %d members of %s that could take it is connected now, and none of the %d asleep could be chosen", g.Skilled, where, g.Asleep)
	case g.Asleep > 0:
		return fmt.Sprintf("none live: none of the %d members of %s that could take it is connected now (or reconnecting); %d of them sleep and can be woken: send again with \"wake_sleepers\": true (in POST /tasks, or in the message's metadata at a community's address; switchboard send --wake-sleepers) and the task waits in one's inbox while its wake goes out", g.Skilled, where, g.Asleep)
	default:
		return fmt.Sprintf("none live: none of the %d members of %s that could take it is connected now (or reconnecting), and none sleeps with a working wake", g.Skilled, where)
	}
}

// byName finds the agent of the handle to, which must be one the sender
// may send work to. A name the sender may not reach reads exactly as a
// name that does not exist; so does a URL, which no handle is (the face
// reads an address URL into its handle: address.go). One it may reach
// that does not accept tasks now is chosen, and its task waits.
func (s *Service) byName(ctx context.Context, sender *switchboard.Agent, to, community, skill string) (*switchboard.Agent, error) {
	handle := strings.ToLower(strings.TrimSpace(to))
	unknown := switchboard.Errorf(switchboard.ENOAGENT, "no member: no agent %q shares a community with %s", switchboard.Truncate(handle, 63), sender.Handle)
	if handle == "" || handle == sender.Handle {
		return nil, unknown
	}
	target, err := s.store.FindAgentByHandle(ctx, handle)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, unknown
	} else if err != nil {
		return nil, err
	}
	if target.AccountDisabled {
		return nil, unknown
	}
	if ok, err := s.shared(ctx, sender, target, community); err != nil {
		return nil, err
	} else if !ok {
		return nil, unknown
	}
	// Not AcceptsTasks: a paused agent keeps the work addressed to it, as
	// its address does (docs/network.md, "Paused agents").
	switch {
	case !target.Approved:
		return nil, switchboard.Errorf(switchboard.ENOAGENT, "none approved: agent %s is not approved by the operator", target.Handle)
	case skill != "" && !offers(target, skill):
		return nil, switchboard.Errorf(switchboard.ENOAGENT, "no skill: agent %s does not offer the skill %q", target.Handle, skill)
	}
	return target, nil
}

// shared reports whether the two agents share a community (the named one,
// when set, which the sender is known to be in).
func (s *Service) shared(ctx context.Context, sender, target *switchboard.Agent, community string) (bool, error) {
	if community == "" {
		return s.store.ShareCommunity(ctx, sender.ID, target.ID)
	}
	in, err := s.store.FindAgentCommunities(ctx, []string{target.ID})
	if err != nil {
		return false, err
	}
	return slices.Contains(in[target.ID], community), nil
}

// offers reports whether one of the agent's public skills has the id or
// the tag skill, in any case.
func offers(g *switchboard.Agent, skill string) bool {
	skill = strings.TrimSpace(skill)
	for _, sk := range g.Skills {
		if strings.EqualFold(sk.ID, skill) || slices.ContainsFunc(sk.Tags, func(t string) bool { return strings.EqualFold(t, skill) }) {
			return true
		}
	}
	return false
}
