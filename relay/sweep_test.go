package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

// TestExpiryReason checks the reason a task fails with when its delivery
// passes its deadline: it names what stood in the way, and the time the
// delivery had (an hour, unless the case says otherwise), not the
// deadline setting of the moment.
func TestExpiryReason(t *testing.T) {
	ctx := context.Background()
	no := false
	tests := map[string]struct {
		mode     switchboard.DeliveryMode
		deadline time.Duration // when the task is sent; 0: the default, an hour
		prepare  func(t *testing.T, f *fixture, g *switchboard.Agent)
		want     string
	}{
		"WebhookFailing": {
			mode: switchboard.ModeWebhook,
			prepare: func(t *testing.T, f *fixture, g *switchboard.Agent) {
				ds, err := f.db.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 1, 4, time.Minute)
				must(t, err)
				must(t, f.db.RetryDelivery(ctx, ds[0].ID, time.Now(), "503 Service Unavailable"))
			},
			want: "not delivered: the webhook did not answer successfully within 1h: last attempt: 503 Service Unavailable",
		},
		"WebhookNotAccepting": {
			mode: switchboard.ModeWebhook,
			prepare: func(t *testing.T, f *fixture, g *switchboard.Agent) {
				_, err := f.db.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{AcceptsTasks: &no})
				must(t, err)
			},
			want: "not delivered: the agent did not take the task within 1h: it is not accepting tasks",
		},
		"ConnectorNotConnected": {
			mode:     switchboard.ModeConnector,
			deadline: 90 * time.Minute,
			want:     "not delivered: the agent did not take the task within 1h30m: it was not connected",
		},
		"ConnectorNotAccepting": {
			mode: switchboard.ModeConnector,
			prepare: func(t *testing.T, f *fixture, g *switchboard.Agent) {
				connect(t, f, g)
				_, err := f.db.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{AcceptsTasks: &no})
				must(t, err)
			},
			want: "not delivered: the agent did not take the task within 1h: it is not accepting tasks",
		},
		"ConnectorNotAcknowledged": {
			mode: switchboard.ModeConnector,
			prepare: func(t *testing.T, f *fixture, g *switchboard.Agent) {
				connect(t, f, g)
				_, err := f.db.ClaimDeliveries(ctx, g.ID, "conn-1", 10, -time.Second)
				must(t, err)
				_, err = f.db.RequeueStaleOffers(ctx, time.Now())
				must(t, err)
			},
			want: "not delivered: the agent did not take the task within 1h: last attempt: the offer was not acknowledged in time",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, membus.New())
			mode := tc.mode
			g, err := f.db.UpdateAgent(ctx, f.agent.ID, switchboard.AgentUpdate{Mode: &mode})
			must(t, err)
			f.agent = g
			if tc.deadline > 0 {
				f.svc.DeliveryDeadline = tc.deadline
			}
			task := f.send(t, "m1", "hello")
			if tc.prepare != nil {
				tc.prepare(t, f, g)
			}
			f.svc.DeliveryDeadline = 5 * time.Minute // changed since: not the task's deadline
			f.svc.Now = func() time.Time { return time.Now().Add(3 * time.Hour) }
			must(t, f.svc.SweepDeliveries(ctx))
			got, err := f.db.FindTaskByID(ctx, task.ID())
			must(t, err)
			if got.State() != a2a.TaskStateFailed {
				t.Fatalf("task %s", got.State())
			}
			if reason := switchboard.MessageText(got.A2A.Status.Message); reason != tc.want {
				t.Fatalf("reason\n%q\nwant\n%q", reason, tc.want)
			}
		})
	}
}

// connect opens a session of agent g that is live for a day.
func connect(t *testing.T, f *fixture, g *switchboard.Agent) {
	t.Helper()
	now := time.Now()
	must(t, f.svc.ConnectAgent(context.Background(), g, &switchboard.AgentSession{AgentID: g.ID, Holder: "conn-1",
		InstanceID: "i", ConnectedAt: now, ExpiresAt: now.Add(24 * time.Hour)}, nil))
}
