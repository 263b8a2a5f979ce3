package a2aedge

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// What the edge asks of its optional services, and what a server without
// each answers. New puts the service in, or the answer of its absence.

// tokenUse records that a peer token was used (peers.Usage).
type tokenUse interface {
	Touch(ctx context.Context, hash string)
}

// noTokenUse is the use of a token store that keeps no last use.
type noTokenUse struct{}

func (noTokenUse) Touch(context.Context, string) {}

// takesNoPairing: without pairing, no agent takes pairing requests.
func takesNoPairing(*switchboard.Agent) bool { return false }

// refuseAgentTokens: without the network, an agent token opens no
// address.
func refuseAgentTokens(context.Context, *switchboard.Token, string, rpcTarget) (rpcCaller, error) {
	return rpcCaller{}, httpapi.ErrBadToken
}

// noCommunity: without the network, no community has the name.
func noCommunity(context.Context, string) (*switchboard.Community, error) {
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "community not found")
}

// publishedCards are the cards forwarding connectors publish for their
// agents (front.Published).
type publishedCards interface {
	Card(ctx context.Context, agentID, public string) *front.Card
}

// noPublished: without published cards, a connector agent's card is its
// settings'.
type noPublished struct{}

func (noPublished) Card(context.Context, string, string) *front.Card { return nil }

// frontCards are the upstream cards of front agents and which of them
// pass through (front.Service).
type frontCards interface {
	Card(ctx context.Context, agentID, public string) (*front.Card, front.CardStatus, *switchboard.Front, error)
	PassThrough(ctx context.Context, agentID string) (bool, error)
	PassOwner(peer switchboard.Peer, id a2a.TaskID) string
}

// noFronts: a server that runs no fronts has no upstream card and no
// pass-through front.
type noFronts struct{}

func (noFronts) Card(context.Context, string, string) (*front.Card, front.CardStatus, *switchboard.Front, error) {
	return nil, front.CardStatus{State: front.CardMissing}, nil, nil
}
func (noFronts) PassThrough(context.Context, string) (bool, error) { return false, nil }
func (noFronts) PassOwner(switchboard.Peer, a2a.TaskID) string     { return "" }
