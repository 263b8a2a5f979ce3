package connector

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/connproto"
)

// PublishCard publishes the agent card of the A2A server this connector
// forwards to (target is that server's URL, card its card as served): the
// agent's address then serves it, rewritten for the address and scrubbed
// of target and every host the card names, under the owner's settings. A
// nil card forgets the card published before. It waits for a connection
// if there is none.
func (c *Client) PublishCard(ctx context.Context, target string, card []byte) error {
	p := connproto.PublishCardParams{Target: target}
	if card != nil {
		if !json.Valid(card) {
			return fmt.Errorf("publish card: the card is not JSON")
		}
		p.Card = card
	}
	if _, err := c.call(ctx, connproto.MethodPublishCard, p, ""); err != nil {
		return fmt.Errorf("publish card: %w", err)
	}
	return nil
}
