package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// lockedBuffer is a bytes.Buffer safe for the pruner's and the test's
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestRecordStoresAndWritesLine: an entry is stored with an id, a time and
// an outcome, and written as one JSON line with the same fields.
func TestRecordStoresAndWritesLine(t *testing.T) {
	db := sqlitetest.Open(t)
	var lines lockedBuffer
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	l := &audit.Log{Store: db, Lines: &lines, Now: func() time.Time { return at }}
	acct := &switchboard.Account{ID: "acct-1", Role: switchboard.RoleOwner}
	e := audit.Entry(acct, "192.0.2.1", switchboard.AuditTokenRevoke, audit.Token(acct.ID, switchboard.TokenPeer, "ci", "agent bob"), nil)
	l.Record(context.Background(), e)

	got, _, err := db.FindAuditEntries(context.Background(), switchboard.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d entries, want 1", len(got))
	}
	g := got[0]
	if g.ID == "" || !g.At.Equal(at) || g.Outcome != switchboard.AuditOK || g.ActorKind != switchboard.AuditOwner ||
		g.ActorID != "acct-1" || g.TargetID != "peer:ci" || g.ClientAddr != "192.0.2.1" {
		t.Fatalf("stored %+v", g)
	}
	var line audit.Line
	if err := json.Unmarshal([]byte(lines.String()), &line); err != nil {
		t.Fatalf("line %q: %v", lines.String(), err)
	}
	if want := audit.LineOf(g); line != want {
		t.Fatalf("line %+v, want %+v", line, want)
	}
	if strings.Count(lines.String(), "\n") != 1 {
		t.Fatalf("lines %q, want one", lines.String())
	}
}

// TestOutcome: no error is ok; no credential or no right is denied; any
// other error failed, with its code; an internal error's text is not
// kept.
func TestOutcome(t *testing.T) {
	for name, tc := range map[string]struct {
		err     error
		outcome switchboard.AuditOutcome
		detail  string
	}{
		"OK":           {nil, switchboard.AuditOK, ""},
		"Unauthorized": {switchboard.Errorf(switchboard.EUNAUTHORIZED, "bad token"), switchboard.AuditDenied, "unauthorized: bad token"},
		"Forbidden":    {switchboard.Errorf(switchboard.EFORBIDDEN, "not yours"), switchboard.AuditDenied, "forbidden: not yours"},
		"Conflict":     {switchboard.Errorf(switchboard.ECONFLICT, "taken"), switchboard.AuditFailed, "conflict: taken"},
		"Internal":     {context.DeadlineExceeded, switchboard.AuditFailed, "internal"},
	} {
		t.Run(name, func(t *testing.T) {
			outcome, detail := audit.Outcome(tc.err)
			if outcome != tc.outcome || detail != tc.detail {
				t.Fatalf("Outcome(%v) = %q, %q, want %q, %q", tc.err, outcome, detail, tc.outcome, tc.detail)
			}
		})
	}
}

// TestCleanCutsSecrets: a detail that carries a secret by mistake (a
// bearer value, a Switchboard token, a password assignment) is cut before
// it is stored.
func TestCleanCutsSecrets(t *testing.T) {
	secret, _ := switchboard.NewToken(switchboard.TokenPeer)
	for _, d := range []string{
		"Authorization: Bearer abcdefgh12345678",
		"token " + secret,
		"password=hunter2hunter2",
	} {
		got := audit.Clean(d)
		for _, s := range []string{"abcdefgh12345678", secret, "hunter2hunter2"} {
			if strings.Contains(got, s) {
				t.Errorf("Clean(%q) = %q, keeps %q", d, got, s)
			}
		}
	}
	if got := audit.Clean(strings.Repeat("é", 400)); len(got) > 500 || !strings.HasPrefix(strings.Repeat("é", 400), got) {
		t.Errorf("a long detail is cut to %d bytes: %q", len(got), got)
	}
}

// TestRunPrunerForgetsOld: the pruner deletes entries older than the
// retention as it starts, keeps the rest, and ends with its context.
func TestRunPrunerForgetsOld(t *testing.T) {
	db := sqlitetest.Open(t)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	l := &audit.Log{Store: db, Now: func() time.Time { return now }}
	ctx := context.Background()
	l.Record(ctx, switchboard.AuditEntry{ID: "old", At: now.Add(-91 * 24 * time.Hour), Action: switchboard.AuditSignIn})
	l.Record(ctx, switchboard.AuditEntry{ID: "new", At: now.Add(-89 * 24 * time.Hour), Action: switchboard.AuditSignIn})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.RunPruner(ctx, audit.DefaultRetention, time.Hour) }()
	testwait.For(t, "the old entry deleted", func() bool {
		got, _, err := db.FindAuditEntries(context.Background(), switchboard.AuditFilter{})
		return err == nil && len(got) == 1 && got[0].ID == "new"
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunPruner = %v, want nil once its context ended", err)
	}
	if err := l.RunPruner(context.Background(), 0, 0); err == nil {
		t.Fatal("RunPruner with no retention: no error")
	}
}
