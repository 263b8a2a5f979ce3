package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/storetest"
)

// TestDeliveryWithoutModeGoesByItsAgent: a delivery written without its
// agent's mode (by a version before migration 0011, or imported from an
// older export) is claimed by the dispatcher of its agent's mode, and by
// no other.
func TestDeliveryWithoutModeGoesByItsAgent(t *testing.T) {
	checkDeliveryWithoutMode(t)
}

// checkDeliveryWithoutMode is TestDeliveryWithoutModeGoesByItsAgent, which
// TestStatementsSearchTheirTables runs too, for its statements.
func checkDeliveryWithoutMode(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteForTest(t)
	storetest.Populate(t, db)
	yes := true
	if _, err := db.UpdateAgent(ctx, "agent-hook", switchboard.AgentUpdate{AcceptsTasks: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE deliveries SET mode = '', next_attempt_at = 0 WHERE state = 'queued'`); err != nil {
		t.Fatal(err)
	}
	got, err := db.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 10, 4, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].AgentID != "agent-hook" {
		var agents []string
		for _, d := range got {
			agents = append(agents, d.AgentID)
		}
		t.Fatalf("claimed the deliveries of %v, want only agent-hook's", agents)
	}
}
