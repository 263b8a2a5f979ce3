package ownerhttp

import (
	"context"
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/reach"
)

// What the owner API asks of its optional services in the handlers that
// are mounted with or without them, and what a server without each
// answers. New puts in the service, or the answer of its absence.

// membership is what the network says of agents outside its own routes
// (network.Service).
type membership interface {
	AgentCommunities(ctx context.Context, agentIDs ...string) (map[string][]string, error)
	ApprovedAtCreation(actor *switchboard.Account) bool
}

// noNetwork: without the network, agents are in no community and start
// approved.
type noNetwork struct{}

func (noNetwork) AgentCommunities(context.Context, ...string) (map[string][]string, error) {
	return nil, nil
}
func (noNetwork) ApprovedAtCreation(*switchboard.Account) bool { return true }

// frontMode is how the owner API handles agents in front mode: frontsOn
// runs them with the fronts service, frontsOff is a server that runs none.
type frontMode interface {
	// check checks the front fields of a request for an agent that is (or
	// becomes) in front mode; was is the agent before a PATCH, nil for a
	// POST.
	check(b *ownerapi.AgentRequest, was *switchboard.Agent) error
	// put keeps the upstream and the record of a request check accepted.
	put(ctx context.Context, agentID string, b *ownerapi.AgentRequest) error
	// of returns the service that runs the front g, or EINVALID when g is
	// not in front mode.
	of(g *switchboard.Agent) (*front.Service, error)
}

type frontsOn struct{ *front.Service }

func (f frontsOn) check(b *ownerapi.AgentRequest, was *switchboard.Agent) error {
	if b.Record != nil {
		if err := switchboard.CheckFrontRecord(*b.Record); err != nil {
			return err
		}
	}
	if b.Upstream == nil && b.UpstreamCardURL != nil {
		return switchboard.Errorf(switchboard.EINVALID, "upstream_card_url is set with upstream")
	}
	if b.Upstream == nil && (was == nil || was.Mode != switchboard.ModeFront) {
		return switchboard.Errorf(switchboard.EINVALID, "a front agent needs an upstream: the https URL of its A2A server")
	}
	if b.Upstream == nil {
		return nil
	}
	return f.Check(*b.Upstream, cardURLOf(b))
}

func (f frontsOn) put(ctx context.Context, agentID string, b *ownerapi.AgentRequest) error {
	if b.Upstream != nil {
		if err := f.Put(ctx, agentID, *b.Upstream, cardURLOf(b)); err != nil {
			return err
		}
	}
	if b.Record != nil {
		return f.SetRecord(ctx, agentID, *b.Record)
	}
	return nil
}

func (f frontsOn) of(g *switchboard.Agent) (*front.Service, error) {
	if g.Mode != switchboard.ModeFront {
		return nil, notFront(g)
	}
	return f.Service, nil
}

// cardURLOf is the upstream card URL of a request, "" when it names none.
func cardURLOf(b *ownerapi.AgentRequest) string {
	if b.UpstreamCardURL == nil {
		return ""
	}
	return *b.UpstreamCardURL
}

// frontsOff: no agent can be made a front, and none is one.
type frontsOff struct{}

func (frontsOff) check(*ownerapi.AgentRequest, *switchboard.Agent) error {
	return switchboard.Errorf(switchboard.EINVALID, "this server does not run fronts")
}
func (frontsOff) put(context.Context, string, *ownerapi.AgentRequest) error { return nil }
func (frontsOff) of(g *switchboard.Agent) (*front.Service, error)           { return nil, notFront(g) }

func notFront(g *switchboard.Agent) error {
	return switchboard.Errorf(switchboard.EINVALID, "agent %s is not in front mode", g.Handle)
}

// publishedCards are the cards forwarding connectors publish
// (front.Published).
type publishedCards interface {
	FindPublishedCard(ctx context.Context, agentID string) (*switchboard.PublishedCard, error)
	Card(ctx context.Context, agentID, public string) *front.Card
}

// noPublished: without published cards, none was published.
type noPublished struct{}

func (noPublished) FindPublishedCard(context.Context, string) (*switchboard.PublishedCard, error) {
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no published card")
}
func (noPublished) Card(context.Context, string, string) *front.Card { return nil }

// oauthGrants are MCP clients' OAuth grants (mcpauth.Service).
type oauthGrants interface {
	EndGrantOf(ctx context.Context, accessHash string) (*switchboard.OAuthGrant, error)
	GrantsByAccess(ctx context.Context, accountID *string) (map[string]*switchboard.OAuthGrant, error)
}

// noGrants: without MCP's OAuth, no MCP token belongs to a grant.
type noGrants struct{}

func (noGrants) EndGrantOf(context.Context, string) (*switchboard.OAuthGrant, error) { return nil, nil }
func (noGrants) GrantsByAccess(context.Context, *string) (map[string]*switchboard.OAuthGrant, error) {
	return nil, nil
}

// reachChecks check how the world reaches agents (reach.Checker).
type reachChecks interface {
	AgentTargets(g *switchboard.Agent) []reach.Target
	CheckAll(ctx context.Context, targets []reach.Target) []ownerapi.Reachability
}

// noReach: without a checker, no address is checked.
type noReach struct{}

func (noReach) AgentTargets(*switchboard.Agent) []reach.Target                   { return nil }
func (noReach) CheckAll(context.Context, []reach.Target) []ownerapi.Reachability { return nil }

// pendingPairings are the pairing requests waiting for a decision
// (pairing.Service).
type pendingPairings interface {
	Pending(ctx context.Context, agent *switchboard.Agent) ([]*switchboard.Pairing, error)
}

// noPairings: without pairing, no request waits.
type noPairings struct{}

func (noPairings) Pending(context.Context, *switchboard.Agent) ([]*switchboard.Pairing, error) {
	return nil, nil
}

// noConnection: without presence, an agent's view says nothing of its
// connection.
func noConnection(*http.Request, *switchboard.Agent, *ownerapi.Agent) {}
