package relay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// DefaultSweepInterval is how often RunDeliverySweeper looks for offers
// that were not acknowledged and deliveries past their deadline.
const DefaultSweepInterval = time.Second

// RunDeliverySweeper keeps deliveries moving until ctx ends: offers whose
// lease ended without an acknowledgement go back to the queue (and their
// agents are told), and deliveries still queued past their deadline fail
// their tasks with a reason the peer can read. Every step is idempotent, so
// several instances may run it at once.
func (s *Service) RunDeliverySweeper(ctx context.Context, interval time.Duration) error {
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
func (s *Service) SweepDeliveries(ctx context.Context) error {
	now := s.Now().UTC()
	agents, err := s.deliveries.RequeueStaleOffers(ctx, now)
	if err != nil {
		return fmt.Errorf("requeue stale offers: %w", err)
	}
	for _, id := range agents {
		s.notify(ctx, switchboard.AgentSubject(id))
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
func (s *Service) expire(ctx context.Context, d *switchboard.Delivery) error {
	var reason string
	if d.Kind != switchboard.DeliverCancel {
		reason = s.expiryReason(ctx, d)
	}
	t, events, err := s.tasks.ModifyTask(ctx, d.TaskID, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		change := &switchboard.TaskChange{CloseDeliveries: []string{d.ID}}
		if d.Kind == switchboard.DeliverCancel || t.State().Terminal() {
			return change, nil
		}
		change.Events = []a2a.Event{s.setStatus(t, a2a.TaskStateFailed, agentText(t, reason))}
		return change, nil
	})
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	s.notifyEvents(ctx, t, events)
	return nil
}

// expiryReason says, for the peer, why a delivery failed at its deadline:
// how long it waited (from the delivery's creation to its own deadline,
// whatever DeliveryDeadline says now) and what stood in the way, as far as
// is known: the webhook's last failed attempt, the agent not connected, or
// not accepting tasks.
func (s *Service) expiryReason(ctx context.Context, d *switchboard.Delivery) string {
	within := formatWait(d.Deadline.Sub(d.CreatedAt))
	what := "task"
	if d.Kind == switchboard.DeliverMessage {
		what = "message"
	}
	took := fmt.Sprintf("not delivered: the agent did not take the %s within %s", what, within)
	lastAttempt := ""
	if d.LastError != "" {
		lastAttempt = ": last attempt: " + d.LastError
	}
	agent, err := s.agents.FindAgentByID(ctx, d.AgentID)
	if err != nil {
		// Deleted meanwhile (or the store failed): what the delivery says.
		return took + lastAttempt
	}
	refusing := d.Kind == switchboard.DeliverTask && !agent.AcceptsTasks
	switch agent.Mode {
	case switchboard.ModeWebhook:
		switch {
		case d.LastError != "":
			return fmt.Sprintf("not delivered: the webhook did not answer successfully within %s%s", within, lastAttempt)
		case refusing:
			return took + ": it is not accepting tasks"
		}
		return fmt.Sprintf("not delivered: the webhook was not called within %s", within)
	case switchboard.ModeConnector:
		connected, err := s.AgentConnected(ctx, agent.ID)
		switch {
		case err == nil && !connected:
			return took + ": it was not connected"
		case refusing:
			return took + ": it is not accepting tasks"
		}
	}
	return took + lastAttempt
}

// formatWait writes a duration as people would: 1h, 1h30m, 45s, 300ms.
func formatWait(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
