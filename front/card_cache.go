package front

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Defaults of a CardCache, and the largest card it reads.
const (
	DefaultCardTTL        = 5 * time.Minute
	DefaultCardRetryAfter = 30 * time.Second
	DefaultCardTimeout    = 10 * time.Second
	MaxCardBytes          = 256 << 10
)

// The states of a CardStatus.
const (
	CardOK      = "ok"      // the card is fresh
	CardStale   = "stale"   // the last fetch failed; the card is an older copy
	CardMissing = "missing" // no card: the fetches failed
	CardRefused = "refused" // no card: the settings do not allow a fetch
)

// CardStatus says where a card from a CardCache comes from.
type CardStatus struct {
	State string // CardOK, CardStale, CardMissing or CardRefused

	// Err is why the last fetch failed or was refused, in words that
	// never hold a URL or a credential; "" when it did not.
	Err string

	// FetchedAt is when the card was fetched; zero without a card.
	FetchedAt time.Time
}

// A CardCache fetches upstreams' cards and keeps them. A card is kept
// for TTL; after that a fetch that fails serves the older copy, marked
// stale, and a failed fetch is not tried again for RetryAfter. Callers
// asking for one card at once share one fetch. The zero value is ready
// to use, and safe for concurrent use.
type CardCache struct {
	TTL        time.Duration    // DefaultCardTTL if zero
	RetryAfter time.Duration    // DefaultCardRetryAfter if zero
	Timeout    time.Duration    // of one fetch, over every URL tried; DefaultCardTimeout if zero
	Now        func() time.Time // time.Now if nil

	mu      sync.Mutex
	entries map[cardKey]*cardEntry // guarded by mu
}

// cardKey names a cached card. Not its public address: anyone can name
// another (the Host of a request, without --public-url), and it must not
// cost another entry, let alone another fetch upstream. The credentials'
// Key is part of it: a card read with other credentials may differ, and
// is scrubbed of other values.
type cardKey struct{ upstream, cardURL, secrets string }

// maxScrubbed bounds the public addresses a cached card is kept scrubbed
// for; past it, the copies are dropped and made again as asked for.
const maxScrubbed = 8

// cardEntry is one cached card. Every field is guarded by CardCache.mu.
type cardEntry struct {
	raw       []byte           // the card as fetched; nil without one
	scrubbed  map[string]*Card // raw parsed and scrubbed, by public address
	fetchedAt time.Time
	err       string        // why the last fetch failed; "" if it did not
	failedAt  time.Time     // when the last fetch failed; zero if it did not
	fetching  chan struct{} // closed when the running fetch ends; nil if none runs
	waiters   int           // callers waiting for the running fetch
}

// Get returns the card of the upstream at upstream, fetched with client
// from cardURL, or from the well-known paths when cardURL is "", and
// scrubbed for the address public. Redirects are not followed, and
// client's own CheckRedirect is not used; credentials, if any, are
// client's to add (its Transport, say). The card is shared: callers must
// not change it.
//
// Get returns a nil card when there is none: with State CardRefused,
// without a fetch, when upstream is not an https URL without
// credentials or cardURL is not on its origin; with CardMissing when the
// fetch failed. Get blocks until a fetch ends or ctx is done; the fetch
// itself is bounded by Timeout and runs on if ctx is done, for the
// callers that come next.
func (c *CardCache) Get(ctx context.Context, client *http.Client, upstream, cardURL, public string) (*Card, CardStatus) {
	return c.GetWith(ctx, client, upstream, cardURL, public, nil)
}

// GetWith is Get for a client that sends credentials whose values are
// secrets: they are removed from the card (see ParseCardWith), which is
// kept apart from the cards read with other credentials.
func (c *CardCache) GetWith(ctx context.Context, client *http.Client, upstream, cardURL, public string, secrets *Secrets) (*Card, CardStatus) {
	urls, problem := cardURLs(upstream, cardURL)
	if problem != "" {
		return nil, CardStatus{State: CardRefused, Err: problem}
	}
	key := cardKey{upstream, cardURL, secrets.Key()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[cardKey]*cardEntry{}
	}
	e := c.entries[key]
	if e == nil {
		e = &cardEntry{}
		c.entries[key] = e
	}
	for {
		now := c.now()
		switch {
		case e.raw != nil && e.failedAt.IsZero() && now.Sub(e.fetchedAt) < c.ttl():
			return e.cardLocked(key, public, secrets), e.statusLocked()
		case !e.failedAt.IsZero() && now.Sub(e.failedAt) < c.retryAfter():
			return e.cardLocked(key, public, secrets), e.statusLocked()
		}
		if e.fetching == nil {
			e.fetching = make(chan struct{})
			go c.fetchEntry(context.WithoutCancel(ctx), client, e, urls, key, public, secrets)
		}
		done := e.fetching
		e.waiters++
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		c.mu.Lock()
		e.waiters--
		if ctx.Err() != nil {
			st := e.statusLocked()
			if st.Err == "" {
				st.Err = "the fetch did not end in time"
			}
			return e.cardLocked(key, public, secrets), st
		}
	}
}

// fetchEntry fetches e's card and records the outcome, the card scrubbed
// for public kept.
func (c *CardCache) fetchEntry(ctx context.Context, client *http.Client, e *cardEntry, urls []string, key cardKey, public string, secrets *Secrets) {
	raw, card, failure := c.fetchCard(ctx, client, urls, key.upstream, key.cardURL, public, secrets)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if failure == "" {
		e.raw, e.scrubbed = raw, map[string]*Card{public: card}
		e.fetchedAt, e.err, e.failedAt = now, "", time.Time{}
	} else {
		e.err, e.failedAt = failure, now
	}
	close(e.fetching)
	e.fetching = nil
}

// cardLocked returns e's card scrubbed for public (and of secrets, the
// values key names), or nil without one. The card parsed when it was
// fetched, parsing it again cannot fail.
func (e *cardEntry) cardLocked(key cardKey, public string, secrets *Secrets) *Card {
	if e.raw == nil {
		return nil
	}
	if card := e.scrubbed[public]; card != nil {
		return card
	}
	card, err := ParseCardWith(e.raw, key.upstream, key.cardURL, public, secrets)
	if err != nil {
		return nil
	}
	if len(e.scrubbed) >= maxScrubbed {
		clear(e.scrubbed)
	}
	e.scrubbed[public] = card
	return card
}

// statusLocked returns the status of e's card.
func (e *cardEntry) statusLocked() CardStatus {
	switch {
	case e.raw == nil:
		return CardStatus{State: CardMissing, Err: e.err}
	case e.err != "":
		return CardStatus{State: CardStale, Err: e.err, FetchedAt: e.fetchedAt}
	}
	return CardStatus{State: CardOK, FetchedAt: e.fetchedAt}
}

// Forget drops the cards of the upstream at upstream, whatever their card
// URL: the front's settings changed. A fetch under
// way ends unrecorded.
func (c *CardCache) Forget(upstream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.upstream == upstream {
			delete(c.entries, k)
		}
	}
}

func (c *CardCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *CardCache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultCardTTL
}

func (c *CardCache) retryAfter() time.Duration {
	if c.RetryAfter > 0 {
		return c.RetryAfter
	}
	return DefaultCardRetryAfter
}

func (c *CardCache) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultCardTimeout
}
