package relay

import (
	"context"
	"sync/atomic"
)

// Sends of one message (one agent, peer and message id) on this instance
// are taken one at a time, where the agent's dispatcher writes on answer
// (a front's): a copy that comes while another is being sent waits for it
// to be written, or refused, and then finds its task as any message sent
// again does. Across instances, and for other agents, the store's record
// of message ids does that; the hold covers a task that is sent before it
// is written (early.go), which no write has recorded yet.

// messageHold is a send of one message in progress on this instance.
type messageHold struct {
	s    *Service
	key  string
	done chan struct{} // closed when the hold is freed
	wait atomic.Int32  // sends of the message waiting for it
	kept bool          // handed over to an early task, which frees it once written
}

// holdMessage waits until no other send of the message is in progress on
// this instance and takes the hold, which the caller must release.
func (s *Service) holdMessage(ctx context.Context, agentID, peerID, messageID string) (*messageHold, error) {
	h := &messageHold{s: s, key: messageKey(agentID, peerID, messageID), done: make(chan struct{})}
	for {
		prev, loaded := s.messages.LoadOrStore(h.key, h)
		if !loaded {
			return h, nil
		}
		p := prev.(*messageHold)
		p.wait.Add(1)
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release frees the hold, unless it was handed over (keep).
func (h *messageHold) release() {
	if !h.kept {
		h.free()
	}
}

// keep hands the hold over to whoever calls free later.
func (h *messageHold) keep() { h.kept = true }

// free lets the next send of the message go on.
func (h *messageHold) free() {
	h.s.messages.CompareAndDelete(h.key, h)
	close(h.done)
}

// messageKey is the key of a message's hold.
func messageKey(agentID, peerID, messageID string) string {
	return agentID + "\x00" + peerID + "\x00" + messageID
}
