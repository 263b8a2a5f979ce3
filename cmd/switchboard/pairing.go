package main

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// newPairing builds the pairing service (docs/pairing.md). Token polls
// are counted per client address, in the store on PostgreSQL (every
// instance sees one count), in memory on SQLite; requests for codes are
// counted in the pairing requests themselves. Each new request wakes the
// agent (a pairing_request wake), if it has a wake configuration.
func (m *Main) newPairing(cfg Config, db *sqlstore.DB) *pairing.Service {
	var polls switchboard.RateLimiter = ratelimit.NewMemory(pairing.DefaultPollsPerMinute, time.Minute)
	if isPostgres(cfg.Database) {
		shared := ratelimit.NewShared(db, pairing.DefaultPollsPerMinute, time.Minute)
		shared.Log = m.Logger
		polls = shared
	}
	return pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, m.Bus, m.Logger), Polls: polls,
		OnRequest: func(ctx context.Context, _ *switchboard.Agent, p *switchboard.Pairing) error {
			_, err := m.Wakes.Enqueue(ctx, pairing.WakeRequest(p)) // agents without a wake configuration get none
			return err
		},
		Logger: m.Logger}, pairing.Config{})
}
