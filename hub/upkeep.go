package hub

import (
	"context"
	"slices"
	"time"
)

// The work an idle connection needs from the store is done here once per
// instance, not once per connection: one statement per heartbeat renews the
// sessions of every connection this instance holds, and one query per poll
// interval finds which of its agents have work queued that no hint
// announced (a lost bus message, a bus outage). Done per connection, that
// work grew with the number of agents connected, until at 100,000 agents
// it was more than the store could serve (docs/performance.md).

// startUpkeepLocked starts the upkeep loop, once; the caller holds h.mu.
func (h *Hub) startUpkeepLocked() {
	if h.upkeepStop != nil {
		return
	}
	h.upkeepStop, h.upkeepDone = make(chan struct{}), make(chan struct{})
	go h.upkeep(h.upkeepStop, h.upkeepDone)
}

// stopUpkeep ends the upkeep loop, if it runs, and waits for it.
func (h *Hub) stopUpkeep() {
	h.mu.Lock()
	stop, done := h.upkeepStop, h.upkeepDone
	h.mu.Unlock()
	if stop == nil {
		return
	}
	h.upkeepOnce.Do(func() { close(stop) })
	<-done
}

func (h *Hub) upkeep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	renew := time.NewTicker(h.cfg.HeartbeatInterval)
	defer renew.Stop()
	poll := time.NewTicker(h.cfg.Poll)
	defer poll.Stop()
	for {
		select {
		case <-stop:
			return
		case <-renew.C:
			h.renewSessions(ctx)
		case <-poll.C:
			h.wakeDue(ctx)
		}
	}
}

// renewSessions extends the sessions of the connections that said hello,
// and tells each connection whose session is no longer its own.
func (h *Hub) renewSessions(ctx context.Context) {
	h.mu.Lock()
	byHolder := make(map[string]*conn, len(h.conns))
	holders := make([]string, 0, len(h.conns))
	for _, c := range h.conns {
		if c.helloDone() && !c.closing.Load() {
			byHolder[c.holder] = c
			holders = append(holders, c.holder)
		}
	}
	h.mu.Unlock()
	if len(holders) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.HeartbeatInterval)
	defer cancel()
	renewed, err := h.Service.RenewAgentSessions(ctx, holders, time.Now().Add(h.sessionTTL()))
	if err != nil {
		if ctx.Err() == nil {
			h.Logger.Warn("renew the sessions of the connected agents; trying again at the next heartbeat", "agents", len(holders), "err", err)
		}
		return // a session outlives three heartbeats
	}
	for _, holder := range renewed {
		delete(byHolder, holder)
	}
	for _, c := range byHolder {
		c.wake(evLost) // it says why and closes
	}
}

// dueChunk bounds the agents one look for queued work asks about, so that
// the agents of the first chunks are woken even if a later one fails.
const dueChunk = 500

// wakeDue wakes the writers of this instance's agents that have work due.
func (h *Hub) wakeDue(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, h.cfg.Poll)
	defer cancel()
	h.mu.Lock()
	connected := make([]string, 0, len(h.conns))
	for id := range h.conns {
		connected = append(connected, id)
	}
	h.mu.Unlock()
	for chunk := range slices.Chunk(connected, dueChunk) {
		ids, err := h.Service.AgentsWithDueWork(ctx, chunk)
		if err != nil {
			if parent.Err() == nil { // a timeout of the look itself is worth a warning
				h.Logger.Warn("look for queued work", "agents", len(connected), "err", err)
			}
			return
		}
		h.mu.Lock()
		for _, id := range ids {
			if c := h.conns[id]; c != nil {
				c.wake(evMore)
			}
		}
		h.mu.Unlock()
	}
}
