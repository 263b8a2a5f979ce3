package pairing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestRunSweeper: with no new request to sweep them, a request that
// expired more than a day ago is deleted by the sweeper; a live one stays.
func TestRunSweeper(t *testing.T) {
	db := sqlitetest.Open(t)
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", CreatedAt: time.Now().UTC()}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	agent := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "echo", Mode: switchboard.ModeInbox, CreatedAt: time.Now().UTC()}
	if err := db.CreateAgent(ctx, agent); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for code, at := range map[string]time.Time{"OLDCODE1": now.Add(-26 * time.Hour), "NEWCODE1": now} {
		p := &switchboard.Pairing{DeviceHash: switchboard.HashToken(code), UserCode: code, AgentID: agent.ID, Requester: "192.0.2.1",
			Interval: 5 * time.Second, CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
		if err := db.CreatePairing(ctx, p, switchboard.PairingLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	s := pairing.New(pairing.Deps{Store: db, Tokens: db}, pairing.Config{})
	run, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.RunSweeper(run, 10*time.Millisecond) }()
	defer func() {
		stop()
		<-done
	}()
	testwait.ForErr(t, "the sweeper to delete the expired request", func() error {
		left, err := db.FindPairings(ctx, switchboard.PairingFilter{AgentID: agent.ID})
		if err != nil {
			return err
		}
		if len(left) != 1 || left[0].UserCode != "NEWCODE1" {
			return fmt.Errorf("%d requests left, want the live one only", len(left))
		}
		return nil
	})
}
