package switchboard

import (
	"context"
	"time"
)

// MaxPublishedCard bounds the agent card a connector publishes, in bytes.
const MaxPublishedCard = 64 << 10

// PublishedCard is the agent card a connector that forwards its tasks to
// an A2A server (switchboard connect --forward) published for its agent:
// that server's card as the connector read it. The agent's address serves
// it rewritten and scrubbed like a front's upstream card, under the
// owner's own settings (docs/front.md).
type PublishedCard struct {
	AgentID string
	// Target is the URL of the server the connector forwards to; the
	// scrubbing removes it, and the hosts the card names, from what peers
	// see.
	Target string
	// Card is the server's card as JSON, at most MaxPublishedCard bytes.
	Card      []byte
	UpdatedAt time.Time
}

// PublishedCardStore keeps the cards connectors publish.
type PublishedCardStore interface {
	// PublishCard keeps c as its agent's published card, replacing the
	// one before.
	PublishCard(ctx context.Context, c *PublishedCard) error

	// ForgetPublishedCard drops an agent's published card, if any.
	ForgetPublishedCard(ctx context.Context, agentID string) error

	// FindPublishedCard returns an agent's published card, or ENOTFOUND.
	FindPublishedCard(ctx context.Context, agentID string) (*PublishedCard, error)
}
