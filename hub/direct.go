package hub

import (
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/connproto"
)

// The hub offers new tasks to the agents connected to it as the tasks are
// created (switchboard.DirectOffers): the task service reserves room on the
// agent's connection, writes the delivery already offered to it, and after
// the commit hands the offer over, which the connection's writer sends like
// any other frame. A reservation counts against the agent's in-flight
// window like an offer, so the claims the writer makes meanwhile leave room
// for it.

// ReserveOffer implements switchboard.DirectOffers.
func (h *Hub) ReserveOffer(agentID string) (string, bool) {
	c := h.conn(agentID)
	if c == nil || !c.helloDone() || c.closing.Load() || c.ctx.Err() != nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hub.cfg.MaxInflight-c.pendingOffers(time.Now())-c.reserved <= 0 {
		return "", false
	}
	c.reserved++
	return c.holder, true
}

// SendOffer implements switchboard.DirectOffers. When it returns false the
// connection is gone or closing, so the caller may release its offers.
func (h *Hub) SendOffer(o *switchboard.Offer) bool {
	c := h.conn(o.Delivery.AgentID)
	if c == nil || c.holder != o.Delivery.Holder {
		return false // closed, or replaced by a newer connection: the reservation went with it
	}
	span := c.startOffer(o.Delivery, false)
	defer endSpan(span)
	b, err := offerFrame(o)
	c.mu.Lock()
	c.reserved--
	if err != nil || c.closing.Load() || c.ctx.Err() != nil {
		c.mu.Unlock()
		if err != nil {
			c.log.Error("encode an offer", "delivery_id", o.Delivery.ID, "err", err)
		}
		return false
	}
	c.inflight[o.Delivery.ID] = o.Delivery // before the write, so a fast answer finds it
	c.mu.Unlock()
	if !c.out.push(b) {
		c.mu.Lock()
		delete(c.inflight, o.Delivery.ID)
		c.mu.Unlock()
		// As for any frame: a connection whose queue is full is closed,
		// and its offers (released by the caller) go to the next one.
		c.log.Warn("agent too slow: its queue is full")
		c.close(connproto.CloseSlow, "too slow: the queue of answers is full")
		return false
	}
	h.met.offers.Inc()
	return true
}

// CancelOffer implements switchboard.DirectOffers.
func (h *Hub) CancelOffer(agentID, holder string) {
	c := h.conn(agentID)
	if c == nil || c.holder != holder {
		return
	}
	c.mu.Lock()
	c.reserved--
	c.mu.Unlock()
	c.wake(evMore) // it may have left work unclaimed for want of the room
}

// conn returns the agent's active connection on this instance, or nil.
func (h *Hub) conn(agentID string) *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[agentID]
}

// offerFrame encodes the request that makes an offer; its id is the
// delivery id.
func offerFrame(o *switchboard.Offer) ([]byte, error) {
	tp := o.Delivery.TraceParent
	if o.Cancel != nil {
		return connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: o.Delivery.ID, Method: connproto.MethodCancelTask, Params: o.Cancel, TraceParent: tp})
	}
	if o.Send == nil {
		return connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: o.Delivery.ID, Method: connproto.MethodSendMessage, TraceParent: tp})
	}
	// A message to send is written in one pass (a2ajson): encoding/json
	// would check and compact the message's text again at every level.
	id, err := json.Marshal(o.Delivery.ID)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":"`+connproto.MethodSendMessage+`","params":`...)
	if b, err = a2ajson.AppendSendMessageRequest(b, o.Send); err != nil {
		return nil, err
	}
	if tp != "" {
		// Written by tracing.Format: hex digits and dashes, nothing to escape.
		b = append(b, `,"traceparent":"`...)
		b = append(b, tp...)
		b = append(b, '"')
	}
	return append(b, '}'), nil
}
