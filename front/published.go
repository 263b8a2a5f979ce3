package front

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// PublishedTTL is how long Published reuses what it read of an agent's
// published card before it reads the store again: a card published on
// another instance shows at most this late.
const PublishedTTL = 30 * time.Second

// maxPublished bounds the agents whose cards Published keeps.
const maxPublished = 4096

// Published serves the cards that connectors forwarding to an A2A server
// publish (switchboard.PublishedCard), parsed and scrubbed for the agent's
// address as a front's upstream card is: the same ParseCard, the same
// rules. Safe for concurrent use.
type Published struct {
	Store  switchboard.PublishedCardStore
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*publishedEntry // by agent id; guarded by mu
}

// publishedEntry is what Published read of one agent's card.
type publishedEntry struct {
	read   time.Time
	stored *switchboard.PublishedCard // nil: none published
	cards  map[string]*Card           // parsed, by public address
}

// Card returns the card the agent's connector published, scrubbed for
// the address public, or nil when there is none (or it cannot be read).
func (p *Published) Card(ctx context.Context, agentID, public string) *Card {
	now := p.now()
	p.mu.Lock()
	e := p.entries[agentID]
	p.mu.Unlock()
	if e == nil || now.Sub(e.read) >= PublishedTTL {
		stored, err := p.Store.FindPublishedCard(ctx, agentID)
		if err != nil && switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			if p.Logger != nil {
				p.Logger.Warn("read a published card", "agent_id", agentID, "err", err)
			}
			return nil
		}
		e = &publishedEntry{read: now, stored: stored, cards: make(map[string]*Card)}
		p.mu.Lock()
		if p.entries == nil || len(p.entries) >= maxPublished {
			p.entries = make(map[string]*publishedEntry)
		}
		p.entries[agentID] = e
		p.mu.Unlock()
	}
	if e.stored == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := e.cards[public]; ok {
		return c
	}
	c, err := ParseCard(e.stored.Card, e.stored.Target, "", public)
	if err != nil {
		c = nil // checked when published; a card that no longer parses shows nothing
	}
	if len(e.cards) >= 8 { // an agent has an address or two
		clear(e.cards)
	}
	e.cards[public] = c
	return c
}

var _ switchboard.PublishedCardStore = (*Published)(nil)

// PublishCard keeps c in the store; this instance's addresses show it at
// once (others within PublishedTTL).
func (p *Published) PublishCard(ctx context.Context, c *switchboard.PublishedCard) error {
	defer p.Forget(c.AgentID)
	return p.Store.PublishCard(ctx, c)
}

// ForgetPublishedCard drops the agent's card from the store; this
// instance's addresses stop showing it at once.
func (p *Published) ForgetPublishedCard(ctx context.Context, agentID string) error {
	defer p.Forget(agentID)
	return p.Store.ForgetPublishedCard(ctx, agentID)
}

// FindPublishedCard reads the agent's card from the store.
func (p *Published) FindPublishedCard(ctx context.Context, agentID string) (*switchboard.PublishedCard, error) {
	return p.Store.FindPublishedCard(ctx, agentID)
}

// Forget drops what Published read of an agent's card, so that the next
// Card reads the store.
func (p *Published) Forget(agentID string) {
	p.mu.Lock()
	delete(p.entries, agentID)
	p.mu.Unlock()
}

func (p *Published) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
