package wake_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// TestAnswerRedactedWholeThenTrimmed: a receiver's answer is searched for
// the wake's key whole before it is trimmed, so a key the trim would cut
// in two leaves no part of itself in the wake's last error or the log;
// and what is kept is printable (a NUL in the answer is not).
func TestAnswerRedactedWholeThenTrimmed(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	const key = "Zq8vR2mN7pL4xK9wT3bC6yH1dF5gJ0sA8eU2iO7nM4rV9tB3cX6zQ1wE5yP0kL2j"
	body := "bad\x00 " + strings.Repeat("x", 465) + " " + key // the key starts before the trim and ends after it
	rc := newReceiver(t, answer{status: 400, body: body})
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0)), Key: ptr(key)})
	var logs strings.Builder
	q.wakes = wake.NewService(q.db, q.db, q.bus, newSender(loopbackOnly), slog.New(slog.NewTextHandler(&logs, nil)))
	q.wakes.Now = q.clock.Now
	q.send(t, "c1", "", "hello")
	q.sendDue(t)
	ws := q.wakesOf(t)
	if ws[0].State != switchboard.WakeFailed {
		t.Fatalf("wake %+v", ws[0])
	}
	if part := key[:20]; strings.Contains(ws[0].LastError, part) || strings.Contains(logs.String(), part) {
		t.Errorf("a part of the key was kept: last error %q", ws[0].LastError)
	}
	if n := len([]rune(ws[0].LastError)); n > len("HTTP 400: ")+501 {
		t.Errorf("last error of %d characters, want the answer trimmed to 500", n)
	}
	if strings.ContainsRune(ws[0].LastError, 0) || !strings.HasPrefix(ws[0].LastError, "HTTP 400: bad? ") {
		t.Errorf("last error %q, want the answer printable", ws[0].LastError)
	}
}
