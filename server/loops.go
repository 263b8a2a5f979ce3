package server

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/wake"
	"github.com/switchboard-dev/switchboard/webhook"
)

// startLoops starts every background loop of the instance under the
// supervisor: each runs on every instance, its steps idempotent or
// claimed, so that instances share the work. They start once the
// listener is known: a wake names the agent's card, whose URL may be the
// listener's.
func (s *Server) startLoops() {
	cfg := s.Config
	s.loops.Go("delivery sweeper", func(ctx context.Context) error {
		return s.Tasks.RunDeliverySweeper(ctx, 0)
	})
	if cfg.Retention > 0 {
		s.loops.Go("task expiry", func(ctx context.Context) error {
			return s.Tasks.RunTaskExpiry(ctx, cfg.Retention, cfg.RetentionInterval)
		})
	}
	if cfg.AuditRetention >= 0 {
		s.loops.Go("audit pruner", func(ctx context.Context) error {
			return s.Audit.RunPruner(ctx, auditRetention(cfg.AuditRetention), 0)
		})
	}
	webhooks := &webhook.Deliverer{
		Client:    netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Allow: cfg.OutboundAllow, Timeout: cfg.WebhookTimeout}),
		UserAgent: "switchboard/" + cfg.Version,
	}
	s.loops.Go("webhook dispatcher", func(ctx context.Context) error {
		return s.Tasks.RunDispatcher(ctx, switchboard.ModeWebhook, webhooks, relay.DispatchConfig{Timeout: cfg.WebhookTimeout})
	})
	// A front's exchange runs until the upstream ends the turn: many may be
	// in flight, for one agent too. A lone instance (SQLite and the
	// in-process bus) sends a blocking call's new task before writing it,
	// which only it can keep track of.
	fronts := relay.DispatchConfig{
		Concurrency: 256, PerAgent: 256, Timeout: frontTimeout(cfg.FrontTimeout) + 30*time.Second, Direct: true,
		WriteOnAnswer: !IsPostgres(cfg.Database) && busName(cfg.Bus) == "memory",
	}
	s.loops.Go("front dispatcher", func(ctx context.Context) error {
		return s.Tasks.RunDispatcher(ctx, switchboard.ModeFront, s.Fronts, fronts)
	})
	pushes := cfg.Push
	pushes.OnAttempt = s.metrics.onPushAttempt
	s.loops.Go("push sender", func(ctx context.Context) error {
		return s.Pushes.Run(ctx, pushes)
	})
	s.loops.Go("pairing sweeper", func(ctx context.Context) error {
		return s.Pairing.RunSweeper(ctx, 0)
	})
	s.loops.Go("wake sender", func(ctx context.Context) error {
		return s.Wakes.RunSender(ctx, wake.SenderConfig{})
	})
}

// frontTimeout is a front's exchange timeout, its default for 0.
func frontTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return front.DefaultTimeout
	}
	return d
}

// retentionWhere says how long finished tasks are kept, for the log.
func retentionWhere(d time.Duration) string {
	if d <= 0 {
		return "forever"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
