package wake_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

// queue is a wake queue end to end: a real SQLite file, the task service
// that accepts peers' messages, the wake service and a sender that reaches
// a real receiver on loopback, all on one settable clock.
type queue struct {
	dsn   string // PostgreSQL; empty: SQLite at path
	path  string
	clock *storetest.Clock
	bus   *membus.Bus
	db    *sqlstore.DB
	tasks *relay.Service
	wakes *wake.Service
	agent *switchboard.Agent
	peer  switchboard.Peer
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// engines runs fn on SQLite and, when SWITCHBOARD_TEST_POSTGRES is set, on
// PostgreSQL.
func engines(t *testing.T, fn func(t *testing.T, engine string)) {
	for _, e := range []string{"sqlite", "postgres"} {
		t.Run(e, func(t *testing.T) { fn(t, e) })
	}
}

func newQueue(t *testing.T, mode switchboard.DeliveryMode) *queue {
	return newQueueOn(t, "sqlite", mode)
}

func newQueueOn(t *testing.T, engine string, mode switchboard.DeliveryMode) *queue {
	t.Helper()
	q := &queue{path: sqlitetest.Path(t), clock: storetest.NewClock(time.Date(2026, 3, 1, 10, 20, 0, 0, time.UTC)), bus: membus.New()}
	if engine == "postgres" {
		q.dsn = pgtest.DSN(t)
	}
	q.open(t)
	t.Cleanup(func() { _ = q.db.Close(); _ = q.bus.Close() })
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(t, q.db.CreateAccount(ctx, acct))
	q.agent = &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "sleeper", Mode: mode, AcceptsTasks: true}
	must(t, q.db.CreateAgent(ctx, q.agent))
	q.peer = switchboard.Peer{AgentID: q.agent.ID, ID: "peer-bob", Label: "bob"}
	return q
}

// open opens the store and builds the services, as a (re)started server does.
func (q *queue) open(t *testing.T) {
	t.Helper()
	var db *sqlstore.DB
	var err error
	if q.dsn != "" {
		db, err = sqlstore.OpenPostgres(context.Background(), q.dsn, sqlstore.PostgresOptions{})
	} else {
		db, err = sqlstore.OpenSQLite(context.Background(), q.path)
	}
	must(t, err)
	db.Now = q.clock.Now
	q.db = db
	q.tasks = relay.New(db, q.bus, quiet)
	q.tasks.Now = q.clock.Now
	q.wakes = wake.NewService(db, db, q.bus, newSender(loopbackOnly), quiet)
	q.wakes.Now = q.clock.Now
}

// restart closes the store and opens it again with new services.
func (q *queue) restart(t *testing.T) {
	t.Helper()
	must(t, q.db.Close())
	q.open(t)
}

func (q *queue) configure(t *testing.T, rc *receiver, upd wake.Update) {
	t.Helper()
	u := rc.URL + "/hook"
	upd.URL = &u
	c, err := wake.ApplyUpdate(q.agent.ID, nil, upd, q.clock.Now(), nil)
	must(t, err)
	must(t, q.db.SaveWakeConfig(context.Background(), c))
}

// send sends a peer's message: a new task in contextID, or a follow-up of
// taskID.
func (q *queue) send(t *testing.T, contextID string, taskID a2a.TaskID, text string) *switchboard.Task {
	t.Helper()
	task, _, err := q.tasks.SendMessage(context.Background(), q.agent, q.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, ContextID: contextID, TaskID: taskID,
			Parts: a2a.ContentParts{a2a.NewTextPart(text)}},
	}, switchboard.ProtocolV1)
	must(t, err)
	return task
}

// sendDue runs one round of the sender and returns how many wakes it claimed.
func (q *queue) sendDue(t *testing.T) int {
	t.Helper()
	n, err := q.wakes.SendDue(context.Background(), wake.SenderConfig{})
	must(t, err)
	return n
}

func (q *queue) wakesOf(t *testing.T) []*switchboard.Wake {
	t.Helper()
	ws, err := q.db.FindWakes(context.Background(), q.agent.ID, 50)
	must(t, err)
	return ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func payloadOf(t *testing.T, r received) *struct {
	TaskIDs []string `json:"taskIds"`
	Kind    string   `json:"kind"`
	Hint    string   `json:"hint"`
	Count   int      `json:"count"`
	Preview string   `json:"preview"`
	Untrust []string `json:"untrusted"`
} {
	t.Helper()
	var p struct {
		TaskIDs []string `json:"taskIds"`
		Kind    string   `json:"kind"`
		Hint    string   `json:"hint"`
		Count   int      `json:"count"`
		Preview string   `json:"preview"`
		Untrust []string `json:"untrusted"`
	}
	must(t, json.Unmarshal(r.Body, &p))
	return &p
}

func TestDebounceMergesABurst(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		q := newQueueOn(t, engine, switchboard.ModeInbox)
		rc := newReceiver(t)
		q.configure(t, rc, wake.Update{})
		a := q.send(t, "c1", "", "first")
		q.clock.Add(2 * time.Second)
		b := q.send(t, "c1", "", "second")
		q.clock.Add(3 * time.Second)
		q.send(t, "", a.ID(), "a follow-up on the first task")
		other := q.send(t, "c2", "", "another conversation")

		q.clock.Add(4 * time.Second) // 9 s after the first message
		if n := q.sendDue(t); n != 0 || len(rc.requests()) != 0 {
			t.Fatalf("a wake went out inside the debounce window (%d)", n)
		}
		q.clock.Add(time.Second)
		if n := q.sendDue(t); n != 1 {
			t.Fatalf("claimed %d wakes at the end of the window, want 1", n)
		}
		reqs := rc.requests()
		if len(reqs) != 1 {
			t.Fatalf("%d wakes, want 1", len(reqs))
		}
		p := payloadOf(t, reqs[0])
		if !slices.Equal(p.TaskIDs, []string{string(a.ID()), string(b.ID())}) || p.Count != 3 || p.Kind != "inbound" ||
			p.Preview != "a follow-up on the first task" {
			t.Fatalf("burst wake %+v", p)
		}
		q.clock.Add(5 * time.Second)
		q.sendDue(t)
		reqs = rc.requests()
		if len(reqs) != 2 || !slices.Equal(payloadOf(t, reqs[1]).TaskIDs, []string{string(other.ID())}) {
			t.Fatalf("the second conversation's wake: %d requests", len(reqs))
		}
		q.clock.Add(time.Hour)
		if n := q.sendDue(t); n != 0 || len(rc.requests()) != 2 {
			t.Fatalf("a wake was sent twice")
		}
	})
}

func TestHourlyCap(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		q := newQueueOn(t, engine, switchboard.ModeInbox)
		rc := newReceiver(t)
		q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0)), MaxPerHour: ptr(2)})
		for _, c := range []string{"c1", "c2", "c3"} {
			q.send(t, c, "", "hello")
		}
		q.sendDue(t)
		q.clock.Add(30 * time.Minute)
		q.sendDue(t)
		if n := len(rc.requests()); n != 2 {
			t.Fatalf("%d wakes within the hour, cap 2", n)
		}
		q.clock.Add(10 * time.Minute) // 11:00
		q.sendDue(t)
		if n := len(rc.requests()); n != 3 {
			t.Fatalf("%d wakes after the hour turned, want 3", n)
		}
	})
}

// TestRetryAfterThenDrop answers 429 and 503 four times: the wake is
// retried after Retry-After (clamped to 30 s–1 h, 60 s without one) three
// times, then dropped.
func TestRetryAfterThenDrop(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		q := newQueueOn(t, engine, switchboard.ModeInbox)
		rc := newReceiver(t,
			answer{status: 429, retryAfter: "5"},    // clamped up to 30 s
			answer{status: 503},                     // no header: 60 s
			answer{status: 429, retryAfter: "7200"}, // clamped down to 1 h
			answer{status: 503, retryAfter: "30"},
		)
		q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
		q.send(t, "c1", "", "hello")
		q.sendDue(t)
		for i, wait := range []time.Duration{30 * time.Second, time.Minute, time.Hour} {
			q.clock.Add(wait - time.Second)
			if q.sendDue(t); len(rc.requests()) != i+1 {
				t.Fatalf("retry %d came before Retry-After", i+1)
			}
			q.clock.Add(time.Second)
			if q.sendDue(t); len(rc.requests()) != i+2 {
				t.Fatalf("retry %d did not come after %s", i+1, wait)
			}
		}
		ws := q.wakesOf(t)
		if len(ws) != 1 || ws[0].State != switchboard.WakeDropped || ws[0].Retries != 3 || ws[0].LastStatus != 503 {
			t.Fatalf("after 3 retries: %+v", ws)
		}
		q.clock.Add(2 * time.Hour)
		if q.sendDue(t); len(rc.requests()) != 4 {
			t.Fatal("a dropped wake was sent again")
		}
	})
}

// TestOtherFailuresNotRetried: a receiver that answers 401 is told once.
func TestOtherFailuresNotRetried(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	rc := newReceiver(t, answer{status: 401, body: "bad key"})
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
	q.send(t, "c1", "", "hello")
	q.sendDue(t)
	q.clock.Add(time.Hour)
	q.sendDue(t)
	ws := q.wakesOf(t)
	if len(rc.requests()) != 1 || ws[0].State != switchboard.WakeFailed || ws[0].LastStatus != 401 {
		t.Fatalf("requests %d, wake %+v", len(rc.requests()), ws[0])
	}
}

// TestFailedAnswerRedacted: a receiver that refuses a wake and echoes the
// request (its key and signature headers) does not get them into the log
// or the wake's last error.
func TestFailedAnswerRedacted(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	const key, hmacSecret = "wk-echoed-0123456789abcdef", "hs-echoed-0123456789abcdef"
	rc := newReceiver(t, answer{status: 400, body: `{"error":"unexpected key","got":"` + key + `","secret":"` + hmacSecret +
		`","headers":{"X-Api-Key":"` + key + `"},"auth":"Bearer sbp_abcdefghijklmnopqrstuvwxyz"}`})
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0)), Key: ptr(key), KeyHeader: ptr("X-Api-Key"),
		KeyPrefix: ptr(""), HMACSecret: ptr(hmacSecret)})
	var logs strings.Builder
	q.wakes = wake.NewService(q.db, q.db, q.bus, newSender(loopbackOnly), slog.New(slog.NewTextHandler(&logs, nil)))
	q.wakes.Now = q.clock.Now
	q.send(t, "c1", "", "hello")
	q.sendDue(t)
	ws := q.wakesOf(t)
	if len(rc.requests()) != 1 || ws[0].State != switchboard.WakeFailed || ws[0].LastStatus != 400 ||
		!strings.Contains(ws[0].LastError, "unexpected key") {
		t.Fatalf("requests %d, wake %+v", len(rc.requests()), ws[0])
	}
	for _, secret := range []string{key[4:], hmacSecret[4:], "abcdefghijklmnop"} {
		if strings.Contains(ws[0].LastError, secret) {
			t.Errorf("the wake's last error holds a secret: %q", ws[0].LastError)
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a secret:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "wake_failed") {
		t.Fatalf("no wake_failed in the log:\n%s", logs.String())
	}
}

// TestRestartInDebounceWindow restarts the server (store closed and opened
// again, new services) in the middle of a debounce window: the wake is
// neither lost nor repeated.
func TestRestartInDebounceWindow(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		q := newQueueOn(t, engine, switchboard.ModeInbox)
		rc := newReceiver(t)
		q.configure(t, rc, wake.Update{})
		a := q.send(t, "c1", "", "before the restart")
		q.clock.Add(5 * time.Second)
		q.restart(t)
		b := q.send(t, "c1", "", "after the restart")
		q.clock.Add(5 * time.Second)
		q.sendDue(t)
		q.restart(t)
		q.clock.Add(time.Hour)
		q.sendDue(t)
		reqs := rc.requests()
		if len(reqs) != 1 || !slices.Equal(payloadOf(t, reqs[0]).TaskIDs, []string{string(a.ID()), string(b.ID())}) {
			t.Fatalf("%d wakes after a restart in the window, want exactly 1 naming both tasks", len(reqs))
		}
	})
}

// TestSenderDiesMidSend: a sender that claimed a wake and died is replaced
// once its lease ends; the wake goes out once.
func TestSenderDiesMidSend(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		q := newQueueOn(t, engine, switchboard.ModeInbox)
		rc := newReceiver(t)
		q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
		q.send(t, "c1", "", "hello")
		if ws, err := q.db.ClaimWakes(context.Background(), "wake/dead-instance", 10, 45*time.Second); err != nil || len(ws) != 1 {
			t.Fatalf("claim: %v %v", ws, err)
		}
		q.restart(t)
		if q.sendDue(t); len(rc.requests()) != 0 {
			t.Fatal("a wake held by another sender was sent within its lease")
		}
		q.clock.Add(46 * time.Second)
		q.sendDue(t)
		q.clock.Add(time.Hour)
		q.sendDue(t)
		if n := len(rc.requests()); n != 1 {
			t.Fatalf("%d wakes, want 1", n)
		}
	})
}

func TestOutboundUpdateEntryPoint(t *testing.T) {
	q := newQueue(t, switchboard.ModeConnector)
	rc := newReceiver(t)
	ctx := context.Background()
	// Without a configuration nothing is queued.
	if ok, err := q.wakes.Enqueue(ctx, switchboard.WakeRequest{AgentID: q.agent.ID, ContextID: "c1", TaskID: "remote-1"}); err != nil || ok {
		t.Fatalf("enqueue without a configuration: %v %v", ok, err)
	}
	q.configure(t, rc, wake.Update{})
	// A connector agent gets no wake for inbound messages: they reach its socket.
	q.send(t, "c9", "", "to the socket")
	ok, err := q.wakes.Enqueue(ctx, switchboard.WakeRequest{AgentID: q.agent.ID, ContextID: "c1", TaskID: "remote-1",
		Kind: switchboard.WakeOutboundUpdate, From: "remote-agent", Preview: "[update on outbound task: completed] Authorization: Bearer abcdefghijklmnop"})
	if err != nil || !ok {
		t.Fatalf("enqueue: %v %v", ok, err)
	}
	if _, err := q.wakes.Enqueue(ctx, switchboard.WakeRequest{AgentID: q.agent.ID, ContextID: "c1", Kind: switchboard.WakeTest}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("a test wake was queued: %v", err)
	}
	if _, err := q.wakes.Enqueue(ctx, switchboard.WakeRequest{AgentID: q.agent.ID, ContextID: strings.Repeat("c", 2000)}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("a context id of 2000 bytes was queued: %v", err)
	}
	q.clock.Add(10 * time.Second)
	q.sendDue(t)
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d wakes, want 1", len(reqs))
	}
	p := payloadOf(t, reqs[0])
	if p.Kind != "outbound_update" || p.Hint != "switchboard history c1" || !slices.Equal(p.TaskIDs, []string{"remote-1"}) ||
		!slices.Contains(p.Untrust, "taskIds") || !slices.Contains(p.Untrust, "contextId") {
		t.Fatalf("outbound update wake %+v", p)
	}
	checkPreview(t, p.Preview)
}

func TestTestWake(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	rc := newReceiver(t, answer{status: 202, body: "queued"})
	ctx := context.Background()
	if _, err := q.wakes.Test(ctx, q.agent); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("test without a configuration: %v", err)
	}
	q.configure(t, rc, wake.Update{})
	res, err := q.wakes.Test(ctx, q.agent)
	if err != nil || res.Status != 202 || res.Body != "queued" {
		t.Fatalf("test wake: %+v %v", res, err)
	}
	if p := payloadOf(t, rc.requests()[0]); p.Kind != "test" {
		t.Fatalf("test wake payload %+v", p)
	}
	if len(q.wakesOf(t)) != 0 {
		t.Fatal("a test wake was queued")
	}
}

// TestRunSender runs the background loop on the real clock: a wake with
// no debounce goes out within the poll interval.
func TestRunSender(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	q.db.Now, q.tasks.Now, q.wakes.Now = time.Now, time.Now, time.Now
	rc := newReceiver(t)
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.wakes.RunSender(ctx, wake.SenderConfig{Poll: 20 * time.Millisecond}) }()
	q.send(t, "c1", "", "hello")
	testwait.For(t, "the wake", func() bool { return len(rc.requests()) > 0 })
	cancel()
	must(t, <-done)
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("%d wakes, want 1", n)
	}
}

// TestShutdownGivesBack: a wake whose request a shutdown cuts short goes
// back to pending, due at once, without counting as a retry.
func TestShutdownGivesBack(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	started, stop := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select { // hangs until the sender goes away
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	q.configure(t, &receiver{Server: srv}, wake.Update{Debounce: ptr(time.Duration(0))})
	q.send(t, "c1", "", "hello")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := q.wakes.SendDue(ctx, wake.SenderConfig{})
		done <- err
	}()
	<-started
	cancel()
	must(t, <-done)
	ws := q.wakesOf(t)
	if len(ws) != 1 || ws[0].State != switchboard.WakePending || ws[0].Retries != 0 || ws[0].DueAt.After(q.clock.Now()) {
		t.Fatalf("after a shutdown mid-request: %+v", ws)
	}
}
