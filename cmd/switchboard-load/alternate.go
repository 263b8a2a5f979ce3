package main

import (
	"context"
	"strconv"
	"time"
)

// Two kinds of phase that compare their throughputs (by name and by
// discovery; direct and through a front) cannot share one phase: calls
// interleaved in it would share the throughput out evenly by
// construction. So they take turns, in rounds of a, b, b, a, each turn a
// slice of -duration; each kind's turns together make its result. The
// order cancels a drift of the machine's speed that is linear over a
// round, and many short rounds cancel most of the rest: this machine's
// speed moves by tens of percent within a minute, which two long turns
// each measured as a difference between the kinds (an A/A run, the same
// kind in both, reported 0.83× to 1.02× with two rounds).

// settle is the unmeasured start of every turn after each kind's first
// (which has -warmup): the calls of the turn before have ended, and this
// kind's views and connections are warm from its earlier turns.
const settle = 250 * time.Millisecond

// turnTarget is the length of a turn that -rounds 0 aims at.
const turnTarget = 2500 * time.Millisecond

// turns returns the rounds of a, b, b, a that -duration is cut into:
// -rounds, or enough for turns of about turnTarget; with -count, no more
// than leave each turn a task.
func (c *config) turns() int {
	r := c.rounds
	if r <= 0 {
		r = max(1, int(c.duration/(2*turnTarget)))
	}
	if c.count > 0 {
		r = max(1, min(r, c.count/2))
	}
	return r
}

// alternate runs a and b in turns (see above) and returns their results.
func (d *driver) alternate(ctx context.Context, a, b phase) (ra, rb *phaseResult) {
	rs := d.alternateAll(ctx, a, b)
	return rs[0], rs[1]
}

// alternateAll runs the kinds ps in turns, each round every kind in order
// and then in reverse (a, b, c, c, b, a), and returns their results in
// the order of ps.
func (d *driver) alternateAll(ctx context.Context, ps ...phase) []*phaseResult {
	rounds := d.cfg.turns()
	out := make([]*phaseResult, len(ps))
	for r := range rounds {
		for i := range 2 * len(ps) {
			k, second := i, 0 // the kind, and whether this is its second turn of the round
			if i >= len(ps) {
				k, second = 2*len(ps)-1-i, 1
			}
			t := d.turn(2*r+second, 2*rounds)
			out[k] = mergeResults(out[k], t.drive(ctx, ps[k]))
			if ctx.Err() != nil {
				break
			}
		}
	}
	for k, r := range out {
		if r == nil { // stopped before its first turn
			out[k] = &phaseResult{name: ps[k].name}
		}
	}
	return out
}

// turn returns a driver for a kind's turn k of its of turns: its share of
// -duration and of -count (the shares add up to -count), -warmup for the
// first turn and settle for the others, and message ids of its own.
func (d *driver) turn(k, of int) *driver {
	cfg := *d.cfg
	cfg.duration /= time.Duration(of)
	cfg.count = d.cfg.count*(k+1)/of - d.cfg.count*k/of
	if k > 0 {
		cfg.warmup = min(cfg.warmup, settle)
	}
	t := *d
	t.cfg, t.run = &cfg, d.run+"t"+strconv.Itoa(k)
	return &t
}

// mergeResults returns a and b together (b alone when a is nil).
func mergeResults(a, b *phaseResult) *phaseResult {
	if a == nil {
		return b
	}
	return mergePhases(a, b)
}
