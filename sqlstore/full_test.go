package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/fulldisk"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestSQLiteDiskFull fills the real file system under a store: a write
// that finds no room fails as storage full (not "disk I/O error"), Ping
// says so while the disk stays full, nothing written before is lost, and
// once room is made the same write succeeds.
func TestSQLiteDiskFull(t *testing.T) {
	disk := fulldisk.Mount(t, 16<<20)
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, filepath.Join(disk.Dir, "switchboard.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	agent := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "inbox", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, agent))
	svc := relay.New(db, membus.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	svc.MaxOpenTasksPerPeer, svc.MaxPeerBytes = 0, 0
	peer := switchboard.Peer{AgentID: agent.ID, ID: "peer-1", Label: "bob"}
	send := func(i int) (*switchboard.Task, error) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(strings.Repeat("x", 8<<10)))
		msg.ID = fmt.Sprintf("m%d", i)
		task, _, err := svc.SendMessage(ctx, agent, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
		return task, err
	}

	disk.Fill(t, 256<<10)
	var accepted []*switchboard.Task
	var failed error
	for i := 0; i < 10_000 && failed == nil; i++ {
		task, err := send(i)
		if err != nil {
			failed = err
			break
		}
		accepted = append(accepted, task)
	}
	if failed == nil {
		t.Fatal("10,000 tasks of 8 KiB fit in 256 KiB")
	}
	if !errors.Is(failed, switchboard.ErrStorageFull) || switchboard.ErrorCode(failed) != switchboard.EUNAVAILABLE {
		t.Fatalf("a write on a full disk: got %v (code %s), want storage full", failed, switchboard.ErrorCode(failed))
	}
	if !strings.Contains(failed.Error(), "no space left") || strings.Contains(switchboard.ErrorMessage(failed), disk.Dir) {
		t.Fatalf("the error names the cause in the log (%q) and no path to callers (%q)", failed, switchboard.ErrorMessage(failed))
	}
	if err := db.Ping(ctx); !errors.Is(err, switchboard.ErrStorageFull) {
		t.Fatalf("Ping on a full disk: %v", err)
	}
	for _, task := range accepted {
		got, err := db.FindTaskByID(ctx, task.ID())
		if err != nil || got.State() != a2a.TaskStateSubmitted {
			t.Fatalf("task %s accepted before the disk filled: %v", task.ID(), err)
		}
	}

	disk.Empty(t)
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping once room was made: %v", err)
	}
	if _, err := send(len(accepted)); err != nil {
		t.Fatalf("the send that failed, once room was made: %v", err)
	}
}

// TestSQLiteOpenOnFullDisk: a store that cannot start for want of space
// says so.
func TestSQLiteOpenOnFullDisk(t *testing.T) {
	disk := fulldisk.Mount(t, 4<<20)
	disk.Fill(t, 0)
	_, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(disk.Dir, "switchboard.db"))
	if err == nil {
		t.Fatal("a store opened on a disk with no room")
	}
	if !errors.Is(err, switchboard.ErrStorageFull) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("open on a full disk: %v", err)
	}
}
