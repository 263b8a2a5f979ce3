package push_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// clock is a fake clock shared by a store and a service.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// pushReceiver is a real HTTP receiver on loopback. It answers each
// request with the next of its statuses (the last one repeats), and records
// the state of the task each request carried.
type pushReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	states   []string // state of every request, in arrival order
	codes    []int    // what each request was answered
	headers  []http.Header
}

func newPushReceiver(t *testing.T, statuses ...int) *pushReceiver {
	r := &pushReceiver{statuses: statuses}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *pushReceiver) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	state := "?"
	var sr a2a.StreamResponse
	var old legacy.Task
	if req.Header.Get("Content-Type") == push.ContentTypeV1 && json.Unmarshal(b, &sr) == nil {
		if task, ok := sr.Event.(*a2a.Task); ok {
			state = switchboard.ShortState(task.Status.State)
		}
	} else if json.Unmarshal(b, &old) == nil {
		state = string(old.Status.State)
	}
	r.mu.Lock()
	code := r.statuses[min(len(r.codes), len(r.statuses)-1)]
	r.states = append(r.states, state)
	r.codes = append(r.codes, code)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "30")
	}
	w.WriteHeader(code)
}

// got returns the states of the requests answered 2xx, and how many
// requests came.
func (r *pushReceiver) got() (delivered []string, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.states {
		if r.codes[i]/100 == 2 {
			delivered = append(delivered, s)
		}
	}
	return delivered, len(r.states)
}

// claimWatch is the push store as the sender sees it: it counts the
// sender's claims and the pushes they handed out. It is how a test knows
// that the sender has looked at the fake clock since it was moved, and so
// that a push it did not send was not due then.
type claimWatch struct {
	push.Store
	mu      sync.Mutex
	calls   int // claims that returned
	claimed int // pushes handed out
}

func (w *claimWatch) ClaimPushes(ctx context.Context, holder string, now time.Time, max int, lease time.Duration, limits switchboard.PushLimits) ([]*switchboard.PushDelivery, error) {
	ps, err := w.Store.ClaimPushes(ctx, holder, now, max, lease, limits)
	w.mu.Lock()
	w.calls++
	w.claimed += len(ps)
	w.mu.Unlock()
	return ps, err
}

func (w *claimWatch) counts() (calls, claimed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls, w.claimed
}

// claimedNow waits for a claim that read the fake clock after the call
// began, and returns how many pushes the sender has been handed in all.
// The sender claims one at a time: of two claims that return after the
// call began, the second began after it.
func (f *pushFixture) claimedNow(t *testing.T) int {
	t.Helper()
	from, _ := f.claims.counts()
	testwait.For(t, "two claims", func() bool { calls, _ := f.claims.counts(); return calls >= from+2 })
	_, claimed := f.claims.counts()
	return claimed
}

// pushFixture is a service on a real SQLite file with a fake clock, and a
// push sender that reaches loopback receivers.
type pushFixture struct {
	path  string
	clk   *clock
	db    *sqlstore.DB
	svc   *relay.Service
	bus   switchboard.Bus
	agent *switchboard.Agent
	peer  switchboard.Peer
	cfg   push.SendConfig
	guard netguard.Options // the sender's; newPushFixture allows 127.0.0.1
	stop  func()
	// claims watches the claims of the sender run starts.
	claims *claimWatch
}

func newPushFixture(t *testing.T, cfg push.SendConfig) *pushFixture {
	f := &pushFixture{path: sqlitetest.Path(t), clk: newClock(), cfg: cfg,
		guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 5 * time.Second}}
	f.open(t)
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, f.db.CreateAccount(ctx, acct))
	f.agent = &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, f.db.CreateAgent(ctx, f.agent))
	f.peer = switchboard.Peer{AgentID: f.agent.ID, ID: "peer-bob", Label: "bob"}
	return f
}

// open opens the store and the service on f.path.
func (f *pushFixture) open(t *testing.T) {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), f.path)
	must(t, err)
	db.Now = f.clk.now
	f.db = db
	f.bus = membus.New()
	f.svc = relay.New(db, f.bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.svc.Now = f.clk.now
	t.Cleanup(func() { _ = db.Close() })
}

// run starts the push sender; f.stop stops it and waits for it.
func (f *pushFixture) run(t *testing.T) {
	t.Helper()
	cfg := f.cfg
	if cfg.Poll == 0 {
		cfg.Poll = 10 * time.Millisecond
	}
	cfg.Jitter = func() float64 { return 1 } // every wait is its whole backoff
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.claims = &claimWatch{Store: f.db}
	svc := push.NewService(f.claims, f.bus, push.New(f.guard, "switchboard/test"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	svc.Now = f.clk.now
	go func() {
		defer close(done)
		_ = svc.Run(ctx, cfg)
	}()
	var once sync.Once
	f.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(f.stop)
}

// send creates a task with an inline push configuration for url.
func (f *pushFixture) send(t *testing.T, url string, proto switchboard.ProtocolVersion) *switchboard.Task {
	t.Helper()
	task, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: url, Token: "tok-123", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "c"}}},
	}, proto)
	must(t, err)
	return task
}

func (f *pushFixture) reply(t *testing.T, id a2a.TaskID, state a2a.TaskState) {
	t.Helper()
	_, err := f.svc.ReplyToTask(context.Background(), id, relay.Reply{Text: "answer " + string(state), State: state})
	must(t, err)
}

// service returns a push service on f's store, bus and clock.
func (f *pushFixture) service(p push.Pusher) *push.Service {
	svc := push.NewService(f.db, f.bus, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	svc.Now = f.clk.now
	return svc
}

// pushes returns the task's pushes.
func (f *pushFixture) pushes(t *testing.T, id a2a.TaskID) *push.History {
	t.Helper()
	h, err := f.service(nil).History(context.Background(), id)
	must(t, err)
	return h
}

// TestPushSequence follows a task through working → input-required → (the
// peer answers) → completed: the receiver gets the three states in order,
// in the shape of the version the config was registered with, with the
// token and credentials; the peer's own submitted states are not pushed.
func TestPushSequence(t *testing.T) {
	for _, proto := range []switchboard.ProtocolVersion{switchboard.ProtocolV1, switchboard.ProtocolV03} {
		t.Run(string(proto), func(t *testing.T) {
			f := newPushFixture(t, push.SendConfig{})
			rc := newPushReceiver(t, 200)
			f.run(t)
			task := f.send(t, rc.URL+"/hook", proto)
			f.reply(t, task.ID(), a2a.TaskStateWorking)
			f.reply(t, task.ID(), a2a.TaskStateInputRequired)
			_, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
				Message: &a2a.Message{ID: "m2", TaskID: task.ID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("more")}},
			}, proto)
			must(t, err)
			f.reply(t, task.ID(), a2a.TaskStateCompleted)
			testwait.For(t, "three pushes", func() bool { d, _ := rc.got(); return len(d) == 3 })
			delivered, requests := rc.got()
			if strings.Join(delivered, ",") != "working,input-required,completed" || requests != 3 {
				t.Fatalf("pushed %v in %d requests", delivered, requests)
			}
			rc.mu.Lock()
			h := rc.headers[2]
			rc.mu.Unlock()
			wantType := push.ContentTypeV1
			if proto == switchboard.ProtocolV03 {
				wantType = push.ContentTypeV03
			}
			if h.Get("Content-Type") != wantType || h.Get("A2A-Notification-Token") != "tok-123" ||
				h.Get("X-A2A-Notification-Token") != "tok-123" || h.Get("Authorization") != "Bearer c" || h.Get("User-Agent") != "switchboard/test" {
				t.Fatalf("headers %v", h)
			}
			testwait.For(t, "all recorded as sent", func() bool {
				ps := f.pushes(t, task.ID()).Pushes
				return len(ps) == 3 && ps[2].State == switchboard.PushSent
			})
			hist := f.pushes(t, task.ID())
			if len(hist.Attempts) != 3 || hist.Attempts[0].StatusCode != 200 || hist.Attempts[0].Error != "" {
				t.Fatalf("attempts %+v", hist.Attempts)
			}
		})
	}
}

// TestPushRetries fails a push with a refused connection, 500, 429
// (Retry-After: 30) and 503 before it succeeds: each retry waits its
// backoff (1 s, 2 s, 4 s, 8 s …; Retry-After when longer) on the fake
// clock, and every attempt is recorded.
func TestPushRetries(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{MinBackoff: time.Second, MaxBackoff: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close() // the first attempt finds nobody listening
	f.run(t)
	task := f.send(t, "http://"+addr+"/hook", switchboard.ProtocolV1)
	f.reply(t, task.ID(), a2a.TaskStateCompleted)

	attempts := func() int { return len(f.pushes(t, task.ID()).Attempts) }
	testwait.For(t, "the first attempt", func() bool { return attempts() == 1 })
	hist := f.pushes(t, task.ID())
	if a := hist.Attempts[0]; a.StatusCode != 0 || !strings.Contains(a.Error, "could not connect") || a.NextAttemptAt == nil ||
		!a.NextAttemptAt.Equal(f.clk.now().Add(time.Second)) {
		t.Fatalf("first attempt %+v", a)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skip("cannot listen on the same port again:", err)
	}
	rc := &pushReceiver{statuses: []int{500, 429, 503, 200}}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.Listener.Close()
	rc.Listener = ln
	rc.Start()
	defer rc.Close()

	// Not due yet: nothing is sent before the backoff has passed. Each
	// check waits for a claim made at the clock's time: had the push been
	// due, that claim would have handed it out.
	if n := f.claimedNow(t); n != 1 {
		t.Fatalf("%d attempts claimed before the first backoff passed, want 1", n)
	}
	if _, n := rc.got(); n != 0 {
		t.Fatal("retried before its backoff")
	}
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 30 * time.Second, 8 * time.Second} {
		f.clk.advance(wait - time.Millisecond)
		if n := f.claimedNow(t); n != i+1 {
			t.Fatalf("attempt %d was claimed a millisecond before its wait of %s", n, wait)
		}
		if got := attempts(); got != i+1 {
			t.Fatalf("attempt %d came before its wait of %s", got, wait)
		}
		f.clk.advance(time.Millisecond)
		testwait.For(t, "the next attempt", func() bool { return attempts() == i+2 })
	}
	hist = f.pushes(t, task.ID())
	codes := []int{}
	for _, a := range hist.Attempts {
		codes = append(codes, a.StatusCode)
	}
	if len(codes) != 5 || codes[1] != 500 || codes[2] != 429 || codes[3] != 503 || codes[4] != 200 {
		t.Fatalf("attempt codes %v", codes)
	}
	if p := hist.Pushes[0]; p.State != switchboard.PushSent || p.Attempts != 5 {
		t.Fatalf("push %+v", p)
	}
}

// TestPushGivesUp stops after MaxAttempts, records why, and then sends the
// configuration's next push.
func TestPushGivesUp(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: time.Second})
	rc := newPushReceiver(t, 500, 500, 500, 200)
	f.run(t)
	task := f.send(t, rc.URL, switchboard.ProtocolV1)
	f.reply(t, task.ID(), a2a.TaskStateWorking)
	f.reply(t, task.ID(), a2a.TaskStateCompleted)
	for i := range 3 {
		testwait.For(t, "an attempt", func() bool { return len(f.pushes(t, task.ID()).Attempts) >= i+1 })
		f.clk.advance(time.Second)
	}
	testwait.For(t, "the completed push", func() bool { d, _ := rc.got(); return len(d) == 1 })
	delivered, requests := rc.got()
	if delivered[0] != "completed" || requests != 4 {
		t.Fatalf("delivered %v in %d requests", delivered, requests)
	}
	rc.mu.Lock()
	states := strings.Join(rc.states, ",")
	rc.mu.Unlock()
	if states != "working,working,working,completed" {
		t.Fatalf("order of requests: %s", states)
	}
	ps := f.pushes(t, task.ID()).Pushes
	if ps[0].State != switchboard.PushFailed || !strings.Contains(ps[0].LastError, "gave up after 3 attempts") {
		t.Fatalf("first push %+v", ps[0])
	}
}

// TestPushGivesUpWhenOld gives up on a push that fails when older than
// MaxAge, however few its attempts.
func TestPushGivesUpWhenOld(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{MaxAge: time.Minute, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	rc := newPushReceiver(t, 503)
	f.run(t)
	task := f.send(t, rc.URL, switchboard.ProtocolV1)
	f.reply(t, task.ID(), a2a.TaskStateCompleted)
	testwait.For(t, "the first attempt", func() bool { return len(f.pushes(t, task.ID()).Attempts) == 1 })
	f.clk.advance(time.Hour)
	testwait.For(t, "the give-up", func() bool {
		return f.pushes(t, task.ID()).Pushes[0].State == switchboard.PushFailed
	})
	if p := f.pushes(t, task.ID()).Pushes[0]; p.Attempts != 2 || !strings.Contains(p.LastError, "older than") {
		t.Fatalf("push %+v", p)
	}
}

// TestPushAcrossRestart keeps a push through a restart: one waits for its
// retry and one was claimed by a sender that died mid-attempt when the
// store is closed; after it is opened again, a new sender sends both, once
// each, in order.
func TestPushAcrossRestart(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{MinBackoff: 10 * time.Second})
	rc := newPushReceiver(t, 503, 200)
	f.run(t)
	task := f.send(t, rc.URL, switchboard.ProtocolV1)
	f.reply(t, task.ID(), a2a.TaskStateWorking)
	testwait.For(t, "the first attempt", func() bool { return len(f.pushes(t, task.ID()).Attempts) == 1 })
	f.stop()
	other := f.send(t, rc.URL, switchboard.ProtocolV1)
	f.reply(t, other.ID(), a2a.TaskStateCompleted)
	claimed, err := f.db.ClaimPushes(context.Background(), "dead", f.clk.now(), 10, time.Minute, switchboard.PushLimits{})
	must(t, err)
	if len(claimed) != 1 || claimed[0].TaskID != other.ID() {
		t.Fatalf("claimed %+v", claimed)
	}
	f.reply(t, task.ID(), a2a.TaskStateCompleted)
	must(t, f.db.Close())

	f.open(t)
	f.run(t)
	f.clk.advance(time.Minute + time.Second) // past the retry and the dead sender's lease
	testwait.For(t, "three pushes delivered", func() bool { d, _ := rc.got(); return len(d) == 3 })
	testwait.For(t, "three pushes recorded as sent", func() bool {
		ps := append(f.pushes(t, task.ID()).Pushes, f.pushes(t, other.ID()).Pushes...)
		for _, p := range ps {
			if p.State != switchboard.PushSent {
				return false
			}
		}
		return len(ps) == 3
	})
	delivered, requests := rc.got()
	if requests != 4 {
		t.Fatalf("%d requests for 3 pushes and one failure", requests)
	}
	// The first task's pushes arrive in order.
	var mine []string
	for _, p := range f.pushes(t, task.ID()).Pushes {
		if p.State != switchboard.PushSent {
			t.Fatalf("push %+v", p)
		}
		mine = append(mine, switchboard.ShortState(p.TaskState))
	}
	if strings.Join(mine, ",") != "working,completed" {
		t.Fatalf("pushes of the first task: %v (delivered %v)", mine, delivered)
	}
	hist := f.pushes(t, other.ID())
	if len(hist.Attempts) != 2 || !strings.Contains(hist.Attempts[0].Error, "interrupted") {
		t.Fatalf("the dead sender's push: %+v", hist.Attempts)
	}
}

// TestPushDeletedConfigStops cancels the pushes of a deleted config.
func TestPushDeletedConfigStops(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{MinBackoff: time.Hour})
	rc := newPushReceiver(t, 503)
	f.run(t)
	task := f.send(t, rc.URL, switchboard.ProtocolV1)
	f.reply(t, task.ID(), a2a.TaskStateWorking)
	testwait.For(t, "the first attempt", func() bool { return len(f.pushes(t, task.ID()).Attempts) == 1 })
	cfgs := f.pushes(t, task.ID()).Configs
	must(t, f.svc.DeletePushConfig(context.Background(), f.peer, task.ID(), cfgs[0].Config.ID))
	f.reply(t, task.ID(), a2a.TaskStateCompleted)
	f.clk.advance(2 * time.Hour)
	// Past the retry: had the push not been canceled, this claim would have
	// handed it out.
	if n := f.claimedNow(t); n != 1 {
		t.Fatalf("%d pushes claimed after the config was deleted", n-1)
	}
	if _, n := rc.got(); n != 1 {
		t.Fatalf("%d requests after the config was deleted", n)
	}
	if p := f.pushes(t, task.ID()).Pushes; len(p) != 1 || p[0].State != switchboard.PushCanceled {
		t.Fatalf("pushes %+v", p)
	}
}

func TestPushBackoff(t *testing.T) {
	cfg := push.SendConfig{MinBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: func() float64 { return 1 }}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 50: 10 * time.Second} {
		if got := cfg.Backoff().Wait(n, 0); got != want {
			t.Errorf("Wait(%d) = %s, want %s", n, got, want)
		}
	}
	cfg.Jitter = func() float64 { return 0 }
	if got := cfg.Backoff().Wait(3, 0); got != 2*time.Second {
		t.Errorf("no jitter: %s, want half of 4 s", got)
	}
	if got := cfg.Backoff().Wait(1, 5*time.Second); got != 5*time.Second {
		t.Errorf("Retry-After 5 s: %s", got)
	}
	if got := cfg.Backoff().Wait(1, time.Hour); got != 10*time.Second {
		t.Errorf("Retry-After 1 h: %s, want the cap", got)
	}
	if got := (push.SendConfig{}).Backoff(); got.Min != push.DefaultMinBackoff || got.Max != push.DefaultMaxBackoff || got.Jitter == nil {
		t.Errorf("defaults: %+v", got)
	}
}

// TestPushRefusedTargetGivenUp runs the sender with the network guard's
// defaults: a push to a loopback address (literal, or a name that resolves
// to it) is refused at dial time and given up at once, not retried, and the
// receiver never hears of it.
func TestPushRefusedTargetGivenUp(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{})
	f.guard = netguard.Options{}
	rc := newPushReceiver(t, 200)
	port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
	f.run(t)
	for _, target := range []string{"https://127.0.0.1:" + port + "/hook", "https://localhost:" + port + "/hook"} {
		task := f.send(t, target, switchboard.ProtocolV1)
		f.reply(t, task.ID(), a2a.TaskStateWorking)
		f.reply(t, task.ID(), a2a.TaskStateCompleted)
		testwait.For(t, "both given up", func() bool {
			ps := f.pushes(t, task.ID()).Pushes
			return len(ps) == 2 && ps[0].State == switchboard.PushFailed && ps[1].State == switchboard.PushFailed
		})
		for _, p := range f.pushes(t, task.ID()).Pushes {
			if p.Attempts != 1 || !strings.Contains(p.LastError, "private or special-purpose address") || !strings.Contains(p.LastError, "not retried") {
				t.Fatalf("%s: push %+v", target, p)
			}
		}
	}
	if _, n := rc.got(); n != 0 {
		t.Fatalf("%d refused pushes arrived", n)
	}
}

// TestPushCanceled pushes a cancellation by the peer, as every other
// change of state.
func TestPushCanceled(t *testing.T) {
	f := newPushFixture(t, push.SendConfig{})
	rc := newPushReceiver(t, 200)
	f.run(t)
	task := f.send(t, rc.URL, switchboard.ProtocolV03)
	_, err := f.svc.CancelTask(context.Background(), f.agent, f.peer, task.ID())
	must(t, err)
	testwait.For(t, "the push", func() bool { d, _ := rc.got(); return len(d) == 1 })
	if d, _ := rc.got(); d[0] != "canceled" {
		t.Fatalf("pushed %v", d)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
