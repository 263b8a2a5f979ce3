package hub

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// A connection that closes ends its session and gives back the offers it
// held (relay.Service.DisconnectAgents). When many close at once (an
// instance's network blinks, a balancer restarts), one write each would
// queue thousands of statements: 100,000 agents leaving six instances at
// once made 200,000, and half of them timed out. So the connections that
// close while one batch is written join the next, written for all of them
// (by a goroutine that runs while batches wait), up to maxDisconnectBatch
// at a time; a lone close is written at once, as before.

// maxDisconnectBatch bounds the connections one batch ends.
const maxDisconnectBatch = 1000

// disconnects gathers the connections that closed into batches.
type disconnects struct {
	mu      sync.Mutex
	queue   []*disconnectBatch // guarded by mu: batches not yet written, oldest first
	writing bool               // guarded by mu: a connection writes the queue's batches
}

// disconnectBatch is the holders of connections ended in one write.
type disconnectBatch struct {
	holders []string
	done    chan struct{} // closed when written
	err     error         // set before done closes
}

// disconnect ends the session of the closed connection holder and
// releases its offers, with those of the connections that close
// meanwhile, and returns when that is written.
func (h *Hub) disconnect(holder string) error {
	d := &h.disconnects
	d.mu.Lock()
	var b *disconnectBatch
	if n := len(d.queue); n > 0 && len(d.queue[n-1].holders) < maxDisconnectBatch {
		b = d.queue[n-1]
	} else {
		b = &disconnectBatch{done: make(chan struct{})}
		d.queue = append(d.queue, b)
	}
	b.holders = append(b.holders, holder)
	if d.writing {
		d.mu.Unlock()
		<-b.done
		return b.err
	}
	// No batch is being written, so the queue holds this one alone: write
	// it, and leave the batches that form meanwhile to a goroutine, so
	// that this connection is not held up by others' closes.
	d.writing = true
	d.queue = d.queue[1:]
	d.mu.Unlock()
	h.writeDisconnects(b)
	d.mu.Lock()
	if len(d.queue) > 0 {
		d.mu.Unlock()
		go h.drainDisconnects()
	} else {
		d.writing = false
		d.mu.Unlock()
	}
	return b.err
}

// drainDisconnects writes the queued batches until none is left.
func (h *Hub) drainDisconnects() {
	d := &h.disconnects
	d.mu.Lock()
	for len(d.queue) > 0 {
		b := d.queue[0]
		d.queue = d.queue[1:]
		d.mu.Unlock()
		h.writeDisconnects(b)
		d.mu.Lock()
	}
	d.writing = false
	d.mu.Unlock()
}

// writeDisconnects writes one batch and tells its connections.
func (h *Hub) writeDisconnects(b *disconnectBatch) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	b.err = h.Service.DisconnectAgents(ctx, b.holders)
	cancel()
	close(b.done)
}

// notifyConsoles tells the consoles watching the account of a closed
// connection's agent that it may have gone offline.
func (h *Hub) notifyConsoles(c *conn) {
	g := c.agent.Load()
	if g == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Bus.Notify(ctx, switchboard.AccountAgentsSubject(g.AccountID)); err != nil {
		c.log.Debug("notify the consoles of a closed connection", "err", err)
	}
}
