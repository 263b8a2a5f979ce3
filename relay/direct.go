package relay

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// DirectOffers is how the instance that holds an agent's connection offers
// it a new task straight from the task's creation, instead of claiming it
// afterwards: the delivery is written already offered to that connection,
// in the transaction that creates the task, and the offer goes to the
// socket from the task in memory. That saves a write transaction and a read
// of the task for each task. The hub implements it; without one (or when
// the agent's connection is on another instance, or has no room) new tasks
// are queued and claimed.
type DirectOffers interface {
	// ReserveOffer takes room for one offer on the agent's connection on
	// this instance, if it has a connection with room, and returns the
	// holder its offers are marked with.
	ReserveOffer(agentID string) (holder string, ok bool)
	// SendOffer sends a committed offer, using up its reservation. It
	// reports false when the connection has gone (the reservation is then
	// gone too).
	SendOffer(o *switchboard.Offer) bool
	// CancelOffer gives back a reservation that no offer used.
	CancelOffer(agentID, holder string)
}

// reserveOffer makes d an offer to the agent's connection on this instance,
// if there is one with room, or to this instance's dispatcher of the
// agent's mode, if it runs and has room, and returns its holder ("" when d
// stays queued).
func (s *Service) reserveOffer(agent *switchboard.Agent, d *switchboard.Delivery, now time.Time) string {
	if !agent.AcceptsTasks {
		return ""
	}
	if agent.Mode != switchboard.ModeConnector {
		return s.reserveDispatch(agent.Mode, d, now)
	}
	if s.Direct == nil {
		return ""
	}
	holder, ok := s.Direct.ReserveOffer(agent.ID)
	if !ok {
		return ""
	}
	d.State, d.Holder, d.Attempts, d.OfferedAt, d.NextAttemptAt = switchboard.DeliveryOffered, holder, 1, &now, now.Add(s.AckTimeout)
	return holder
}

// sendReserved finishes what reserveOffer began, once the task's change was
// committed (err nil) or not. It reports whether the offer went out; when
// it did not, the delivery is in the queue and the agent's subject must be
// notified as for any queued work.
func (s *Service) sendReserved(ctx context.Context, agent *switchboard.Agent, t *switchboard.Task, d *switchboard.Delivery, holder string, err error) bool {
	if holder != "" && agent.Mode != switchboard.ModeConnector {
		return s.sendDispatch(agent, t, d, err)
	}
	switch {
	case holder == "":
		return false
	case err != nil || d.State != switchboard.DeliveryOffered:
		// Not created, or the store queued it behind older work.
		s.Direct.CancelOffer(agent.ID, holder)
		return false
	}
	o := s.offerFor(d, t)
	if o == nil {
		s.Direct.CancelOffer(agent.ID, holder)
		return false // cannot happen (offerFor logs it); the lease ends it
	}
	if s.Direct.SendOffer(o) {
		return true
	}
	// The connection went away between the reservation and now, and may
	// have released its offers before this one was committed: release
	// this one, so that the next connection is offered it at once (rather
	// than when the offer's lease ends). The connection's other offers are
	// its own to release, after the answers it holds are written.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second) // the peer may have gone
	defer cancel()
	if err := s.deliveries.RetryDelivery(rctx, d.ID, s.Now(), ""); err != nil {
		s.log.Warn("release an offer whose connection closed", "delivery_id", d.ID, "err", err)
	}
	return false
}
