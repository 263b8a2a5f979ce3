package connproto

import "encoding/json"

// MethodPublishCard, agent to server: the agent card of the A2A server a
// connector forwards its tasks to (PublishCardParams → "ok"). The
// agent's address serves it rewritten and scrubbed, under the owner's
// settings; a card that is null or absent forgets the one published
// before. A card over switchboard.MaxPublishedCard bytes, or that is not
// an agent card, is CodeInvalidParams.
const MethodPublishCard = "PublishCard"

// PublishCardParams carry a published card.
type PublishCardParams struct {
	// Target is the URL of the server the connector forwards to. The
	// address's card never shows it, nor any host of the card's own
	// interfaces.
	Target string `json:"target"`
	// Card is that server's agent card as it served it (1.0 or 0.3).
	Card json.RawMessage `json:"card,omitempty"`
}
