package switchboard

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// DefaultSweepInterval is how often RunDeliverySweeper looks for offers
// that were not acknowledged and deliveries past their deadline.
const DefaultSweepInterval = time.Second

// RunDeliverySweeper keeps deliveries moving until ctx ends: offers whose
// lease ended without an acknowledgement go back to the queue (and their
// agents are told), and deliveries still queued past their deadline fail
// their tasks with a reason the peer can read. Every step is idempotent, so
// several instances may run it at once.
func (s *TaskService) RunDeliverySweeper(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := s.SweepDeliveries(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// SweepDeliveries runs one round of RunDeliverySweeper.
func (s *TaskService) SweepDeliveries(ctx context.Context) error {
	now := s.Now().UTC()
	agents, err := s.deliveries.RequeueStaleOffers(ctx, now)
	if err != nil {
		return fmt.Errorf("requeue stale offers: %w", err)
	}
	for _, id := range agents {
		s.notify(ctx, AgentSubject(id))
	}
	for {
		expired, err := s.deliveries.FindExpiredDeliveries(ctx, now, 100)
		if err != nil {
			return fmt.Errorf("find expired deliveries: %w", err)
		}
		for _, d := range expired {
			if err := s.expire(ctx, d); err != nil {
				return fmt.Errorf("expire delivery %s: %w", d.ID, err)
			}
		}
		if len(expired) < 100 {
			return nil
		}
	}
}

// expire closes a delivery that waited past its deadline and fails its task
// (a cancel notice that could not be delivered only closes).
func (s *TaskService) expire(ctx context.Context, d *Delivery) error {
	_, events, err := s.tasks.ModifyTask(ctx, d.TaskID, func(t *Task) (*TaskChange, error) {
		change := &TaskChange{CloseDeliveries: []string{d.ID}}
		if d.Kind == DeliverCancel || t.State().Terminal() {
			return change, nil
		}
		reason := fmt.Sprintf("not delivered: the agent did not take the task within %s (it was not connected, or not accepting tasks)",
			s.DeliveryDeadline.Round(time.Second))
		change.Events = []a2a.Event{s.setStatus(t, a2a.TaskStateFailed, agentText(t, reason))}
		return change, nil
	})
	if ErrorCode(err) == ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	s.notifyEvents(ctx, events)
	return nil
}
