package relay

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// OfferDirectly makes d the way new tasks for connector agents are offered
// to this instance's connections as they are created
// (switchboard.DirectOffers); without it they are queued and claimed. The
// hub calls it as it is made, before the service is used.
func (s *Service) OfferDirectly(d switchboard.DirectOffers) { s.direct = d }

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
	if s.direct == nil {
		return ""
	}
	holder, ok := s.direct.ReserveOffer(agent.ID)
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
		s.direct.CancelOffer(agent.ID, holder)
		return false
	}
	o := s.offerFor(d, t)
	if o == nil {
		s.direct.CancelOffer(agent.ID, holder)
		return false // cannot happen (offerFor logs it); the lease ends it
	}
	if s.direct.SendOffer(o) {
		return true
	}
	// The connection went away between the reservation and now, and may
	// have released its offers before this one was committed: release
	// this one, so that the next connection is offered it at once (rather
	// than when the offer's lease ends). The connection's other offers are
	// its own to release, after the answers it holds are written.
	s.releaseOffer(ctx, d)
	return false
}
