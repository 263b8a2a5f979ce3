package audit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/redact"
)

var _ switchboard.AuditLog = (*Log)(nil)

// DefaultRetention is how long entries are kept unless told otherwise
// (serve --audit-retention).
const DefaultRetention = 90 * 24 * time.Hour

// DefaultPruneInterval is how often RunPruner looks for old entries.
const DefaultPruneInterval = time.Hour

// maxDetail bounds an entry's detail, in bytes.
const maxDetail = 500

// Log records audit entries in its store and, if Lines is set, as JSON
// lines. It is safe for concurrent use; its fields are set before first
// use and not changed after.
type Log struct {
	// Store keeps the entries.
	Store switchboard.AuditStore
	// Lines, if not nil, also receives every entry as one JSON object on
	// a line (serve --audit-log); writes are serialized.
	Lines io.Writer
	// Logger receives the errors of storing and writing (default: none).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu sync.Mutex // guards writes to Lines
}

// Line is the JSON of an entry written to Lines; its keys are snake_case,
// as in the owner API.
type Line struct {
	ID         string    `json:"id"`
	At         time.Time `json:"at"`
	AccountID  string    `json:"account_id,omitempty"`
	ActorKind  string    `json:"actor_kind"`
	ActorID    string    `json:"actor_id,omitempty"`
	Action     string    `json:"action"`
	TargetKind string    `json:"target_kind,omitempty"`
	TargetID   string    `json:"target_id,omitempty"`
	Outcome    string    `json:"outcome"`
	ClientAddr string    `json:"client_addr,omitempty"`
	Detail     string    `json:"detail,omitempty"`
}

// Record implements switchboard.AuditLog: it sets e's ID and time if they
// are empty, cleans its detail (Clean), stores it and writes its line. A
// failure is logged, never returned: the action it records has happened.
// Record stores with a context that outlives ctx's cancellation, so that a
// client that hangs up does not erase its trace.
func (l *Log) Record(ctx context.Context, e switchboard.AuditEntry) {
	if e.ID == "" {
		e.ID = switchboard.NewID()
	}
	if e.At.IsZero() {
		e.At = l.now()
	}
	e.At = e.At.UTC()
	e.Detail = Clean(e.Detail)
	if e.Outcome == "" {
		e.Outcome = switchboard.AuditOK
	}
	if err := l.Store.CreateAuditEntry(context.WithoutCancel(ctx), &e); err != nil {
		l.logger().Error("store audit entry", "action", e.Action, "err", err)
	}
	if l.Lines != nil {
		l.writeLine(&e)
	}
}

// writeLine writes e as one JSON line.
func (l *Log) writeLine(e *switchboard.AuditEntry) {
	b, err := json.Marshal(LineOf(e))
	if err != nil {
		l.logger().Error("encode audit entry", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.Lines.Write(append(b, '\n')); err != nil {
		l.logger().Error("write audit line", "err", err)
	}
}

// LineOf returns e as its JSON line.
func LineOf(e *switchboard.AuditEntry) Line {
	return Line{ID: e.ID, At: e.At, AccountID: e.AccountID, ActorKind: string(e.ActorKind), ActorID: e.ActorID,
		Action: string(e.Action), TargetKind: e.TargetKind, TargetID: e.TargetID, Outcome: string(e.Outcome),
		ClientAddr: e.ClientAddr, Detail: e.Detail}
}

// Clean returns a detail fit for the log: one line, at most 500 bytes, and
// whatever looks like a secret (a bearer value, a token, a password=…
// assignment) cut by redact.Secrets. The faces never pass a secret; this
// is the last guard.
func Clean(detail string) string {
	d := strings.Join(strings.Fields(detail), " ")
	d = redact.Secrets(d)
	if len(d) > maxDetail {
		d = strings.ToValidUTF8(d[:maxDetail], "")
	}
	return d
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Log) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.New(slog.DiscardHandler)
}
