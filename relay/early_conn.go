package relay

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// A connector agent's new task is sent before it is written, as a front's
// is (early.go), when Service.WriteOnAnswer is set and the agent's
// connection is on this instance with room for the offer. The agent's
// answer to the offer writes it, acknowledged, in one transaction. What
// the agent does with the task other than answering its offer (an update
// of the task, a read of it) finds it written first, as created; so does
// the release of a connection's offers when it closes.

// sendEarly sends e's task to its agent, by the dispatcher or the
// connection on this instance that reserved its delivery, and reports
// whether it went out.
func (s *Service) sendEarly(e *earlyTask) bool {
	if e.agent.Mode != switchboard.ModeConnector {
		return s.sendDispatch(e.agent, e.t, e.d, nil)
	}
	d := *e.d // the connection's own: it may mark it (its trace) as it sends
	o := s.offerFor(&d, e.t)
	if o == nil {
		s.direct.CancelOffer(e.agent.ID, d.Holder)
		return false // cannot happen (offerFor logs it)
	}
	return s.direct.SendOffer(o)
}

// unsent writes e as created when its offer did not go out. A dispatcher's
// always goes (its room was reserved); a connection may have closed since
// its reservation, and released its offers before this one was written,
// so its delivery goes back to the queue, for the agent's next connection.
func (s *Service) unsent(ctx context.Context, e *earlyTask) {
	err := e.writeCreated()
	s.early.Delete(e.d.ID)
	if err != nil || e.agent.Mode != switchboard.ModeConnector {
		return
	}
	s.releaseOffer(ctx, e.d)
	s.notifyAgent(ctx, e.agent)
}

// releaseOffer puts the offered delivery d, whose connection closed,
// back in the queue, due at once.
func (s *Service) releaseOffer(ctx context.Context, d *switchboard.Delivery) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second) // the peer may have gone
	defer cancel()
	if err := s.deliveries.RetryDelivery(rctx, d.ID, s.Now(), ""); err != nil {
		s.log.Warn("release an offer whose connection closed", "delivery_id", d.ID, "err", err)
	}
}

// writeEarlyTask writes the task id as created, if it was sent before it
// was written and is not written yet. A refusal needs no answer here:
// the task is then not found.
func (s *Service) writeEarlyTask(id a2a.TaskID) {
	if v, ok := s.earlyTasks.Load(id); ok {
		_ = v.(*earlyTask).writeCreated()
	}
}

// writeEarlyOffered writes as created the tasks sent before they were
// written to the connections named by holders, which closed, so that
// their offers are released with the others.
func (s *Service) writeEarlyOffered(holders []string) {
	var closed map[string]bool
	s.early.Range(func(_, v any) bool {
		e := v.(*earlyTask)
		if e.agent.Mode != switchboard.ModeConnector {
			return true
		}
		if closed == nil {
			closed = make(map[string]bool, len(holders))
			for _, h := range holders {
				closed[h] = true
			}
		}
		if closed[e.d.Holder] {
			_ = e.writeCreated()
		}
		return true
	})
}
