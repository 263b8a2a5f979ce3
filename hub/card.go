package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/front"
)

// onPublishCard keeps the card of the A2A server the agent's connector
// forwards to, or forgets it (a null card). The card is checked the way
// the address reads it (front.ParseCard) before it is kept, so a
// connector learns at once that its server's card is not one.
func (c *conn) onPublishCard(f *connproto.Frame) {
	if c.hub.Cards == nil {
		c.replyError(f.ID, connproto.CodeMethodNotFound, "method not found: "+connproto.MethodPublishCard)
		return
	}
	var p connproto.PublishCardParams
	if err := json.Unmarshal(f.Params, &p); err != nil {
		c.replyError(f.ID, connproto.CodeInvalidParams, `PublishCard params must be {"target": URL, "card": agent card or null}`)
		return
	}
	agent := c.agent.Load()
	if card := bytes.TrimSpace(p.Card); len(card) == 0 || bytes.Equal(card, []byte("null")) {
		if err := c.hub.Cards.ForgetPublishedCard(c.ctx, agent.ID); err != nil {
			c.log.Error("forget a published card", "err", err)
			c.replyError(f.ID, connproto.CodeInternal, "internal error")
			return
		}
		c.reply(f.ID, "ok")
		return
	}
	if u, err := url.Parse(p.Target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.replyError(f.ID, connproto.CodeInvalidParams, "target must be the http(s) URL the connector forwards to")
		return
	}
	if len(p.Card) > switchboard.MaxPublishedCard {
		c.replyError(f.ID, connproto.CodeInvalidParams, fmt.Sprintf("the card is %d bytes, more than the %d allowed", len(p.Card), switchboard.MaxPublishedCard))
		return
	}
	if _, err := front.ParseCard(p.Card, p.Target, "", ""); err != nil {
		c.replyError(f.ID, connproto.CodeInvalidParams, "not an agent card: a JSON object with a name")
		return
	}
	err := c.hub.Cards.PublishCard(c.ctx, &switchboard.PublishedCard{AgentID: agent.ID, Target: p.Target, Card: p.Card})
	if err != nil {
		c.log.Error("publish a card", "err", err)
		c.replyError(f.ID, connproto.CodeInternal, "internal error")
		return
	}
	c.reply(f.ID, "ok")
}
