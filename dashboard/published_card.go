package dashboard

import (
	"context"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// publishedCardRow is the card a connector agent's `connect --forward`
// published for it, as GET /agents/{ref} shows it (published_card):
// the server it forwards to, the card's name and skills, and when.
type publishedCardRow struct {
	Target string
	// Name and Skills are empty when the stored card no longer parses
	// (its address then serves the agent's own card).
	Name, Skills string
	Updated      string
}

// publishedCard returns the card the connector agent g's forwarding
// connector published, read for its address, or nil when there is none
// (or it cannot be read: the page shows nothing, as the API does).
func (c *Console) publishedCard(ctx context.Context, g *switchboard.Agent, address string) *publishedCardRow {
	if c.Published == nil || g.Mode != switchboard.ModeConnector {
		return nil
	}
	pc, err := c.Published.FindPublishedCard(ctx, g.ID)
	if err != nil {
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			c.Logger.Warn("read a published card", "agent_id", g.ID, "err", err)
		}
		return nil
	}
	row := &publishedCardRow{Target: pc.Target, Updated: pc.UpdatedAt.UTC().Format(time.DateTime + " UTC")}
	if card := c.Published.Card(ctx, g.ID, address); card != nil {
		row.Name, row.Skills = card.Name, countSkills(len(card.Skills))
	}
	return row
}

// countSkills says how many skills a card has, in words.
func countSkills(n int) string {
	if n == 1 {
		return "1 skill"
	}
	return strconv.Itoa(n) + " skills"
}
