package switchboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// WakeSubject is notified when a wake is queued that may be due at once
// (an outbound update, a configuration without debounce), so that a sender
// claims it without waiting for its poll.
const WakeSubject = "wake"

// Retry rules for wakes answered with 429 or 503.
const (
	WakeMaxRetries        = 3
	WakeRetryAfterMin     = 30 * time.Second
	WakeRetryAfterMax     = time.Hour
	WakeRetryAfterDefault = time.Minute
)

// Waker sends one wake to its receiver (the wake package, over the network
// guard). It returns the receiver's answer; an error means no answer came
// (refused address, timeout, connection failure, a body that could not be
// rendered).
type Waker interface {
	Wake(ctx context.Context, agent *Agent, cfg *WakeConfig, w *Wake) (*WakeResult, error)
}

// WakeResult is a receiver's answer to a wake.
type WakeResult struct {
	Status     int    // HTTP status
	RetryAfter string // the Retry-After header, as sent
	Body       string // the start of the answer's body
}

// ErrWakeRefused is wrapped by a Waker's errors that retrying cannot cure:
// an address the network guard refuses, a body template that does not
// render.
var ErrWakeRefused = errors.New("wake refused")

// WakeService queues wakes and sends them. It is written against the store
// and the bus only, like TaskService.
type WakeService struct {
	store  WakeStore
	agents AgentStore
	bus    Bus
	waker  Waker
	log    *slog.Logger

	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// InstanceID names this process; the wakes it claims are held by it.
	InstanceID string
	// CheckTemplate, if set, checks a body template when a configuration
	// is saved (the renderer lives with the sender).
	CheckTemplate func(string) error
	// OnOutcome, if set, is called with each recorded outcome of a queued
	// wake's attempt: one of WakeOutcomes. It is for metrics: it must
	// return at once. Set it before the sender runs.
	OnOutcome func(outcome string)
}

// WakeOutcomes are the outcomes OnOutcome reports: sent (2xx), retried
// (429, 503 or no answer: queued again), failed (another status, or
// refused), dropped (retries used up, or the configuration gone).
var WakeOutcomes = []string{"sent", "retried", "failed", "dropped"}

func (s *WakeService) outcome(o string) {
	if s.OnOutcome != nil {
		s.OnOutcome(o)
	}
}

// NewWakeService returns a WakeService that sends through waker.
func NewWakeService(store WakeStore, agents AgentStore, bus Bus, waker Waker, log *slog.Logger) *WakeService {
	return &WakeService{store: store, agents: agents, bus: bus, waker: waker, log: log, Now: time.Now, InstanceID: NewID()}
}

// inboundWake is the wake request that a peer's message to an agent
// causes. Inbound wakes are for inbox agents: connector agents receive the
// message on their socket and webhook agents in a request of its own.
func inboundWake(agent *Agent, t *Task, caller Peer, msg *a2a.Message) *WakeRequest {
	if agent.Mode != ModeInbox {
		return nil
	}
	return &WakeRequest{AgentID: agent.ID, ContextID: t.A2A.ContextID, TaskID: t.ID(), Kind: WakeInbound,
		From: caller.Label, Preview: WakePreview(MessageText(msg))}
}

// SetConfig applies upd to the agent's wake configuration (creating it if
// there is none), checks the result and saves it.
func (s *WakeService) SetConfig(ctx context.Context, agent *Agent, upd WakeUpdate) (*WakeConfig, error) {
	old, err := s.store.FindWakeConfig(ctx, agent.ID)
	if ErrorCode(err) == ENOTFOUND {
		old = nil
	} else if err != nil {
		return nil, err
	}
	c, err := ApplyWakeUpdate(agent.ID, old, upd, s.Now().UTC(), s.CheckTemplate)
	if err != nil {
		return nil, err
	}
	if err := s.store.SaveWakeConfig(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the agent's wake configuration, or ENOTFOUND.
func (s *WakeService) Config(ctx context.Context, agent *Agent) (*WakeConfig, error) {
	c, err := s.store.FindWakeConfig(ctx, agent.ID)
	if ErrorCode(err) == ENOTFOUND {
		return nil, Errorf(ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	}
	return c, err
}

// DeleteConfig removes the agent's wake configuration; its pending wakes
// are dropped.
func (s *WakeService) DeleteConfig(ctx context.Context, agent *Agent) error {
	err := s.store.DeleteWakeConfig(ctx, agent.ID)
	if ErrorCode(err) == ENOTFOUND {
		return Errorf(ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	}
	return err
}

// Recent returns the agent's latest wakes, newest first.
func (s *WakeService) Recent(ctx context.Context, agent *Agent, limit int) ([]*Wake, error) {
	return s.store.FindWakes(ctx, agent.ID, limit)
}

// maxWakeRefLen bounds the ids a queued wake names (a remote agent's ids
// may be longer than ours).
const maxWakeRefLen = 1024

// Enqueue queues a wake of r.AgentID in a transaction of its own and tells
// the senders. It is the entry point for wakes that no task change of the
// agent's causes, such as an update pushed for a task the agent sent
// (kind WakeOutboundUpdate): it redacts and trims the preview and reports
// false when the agent has no wake configuration.
func (s *WakeService) Enqueue(ctx context.Context, r WakeRequest) (bool, error) {
	if r.AgentID == "" || r.ContextID == "" {
		return false, Errorf(EINVALID, "a wake needs an agent and a context")
	}
	if len(r.ContextID) > maxWakeRefLen || len(r.TaskID) > maxWakeRefLen {
		return false, Errorf(EINVALID, "a wake's context and task ids are at most %d bytes", maxWakeRefLen)
	}
	if r.Kind == "" {
		r.Kind = WakeOutboundUpdate
	}
	if r.Kind != WakeInbound && r.Kind != WakeOutboundUpdate {
		return false, Errorf(EINVALID, "wake kind %q cannot be queued", r.Kind)
	}
	r.Preview = WakePreview(r.Preview)
	r.From = truncateRunes(strings.Join(strings.Fields(r.From), " "), 200)
	queued, err := s.store.EnqueueWake(ctx, &r)
	if err == nil && queued {
		if err := s.bus.Notify(ctx, WakeSubject); err != nil {
			s.log.Warn("notify wake senders", "err", err)
		}
	}
	return queued, err
}

// Test sends one wake of kind test to the agent now, outside the queue and
// its cap, and returns the answer. An error that is not the receiver's
// answer (refused, timeout) is returned as an *Error the owner can read.
func (s *WakeService) Test(ctx context.Context, agent *Agent) (*WakeResult, error) {
	cfg, err := s.store.FindWakeConfig(ctx, agent.ID)
	if ErrorCode(err) == ENOTFOUND {
		return nil, Errorf(ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	} else if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	w := &Wake{ID: NewID(), AgentID: agent.ID, ContextID: "test", Kind: WakeTest, Count: 1, State: WakeSending,
		From: "switchboard", DueAt: now, CreatedAt: now, UpdatedAt: now}
	res, err := s.waker.Wake(ctx, agent, cfg, w)
	if err != nil {
		s.log.Info("wake_failed", "agent_id", agent.ID, "kind", WakeTest, "err", err)
		return nil, Errorf(EINVALID, "the test wake was not answered: %s", err.Error())
	}
	s.log.Info("wake_sent", "agent_id", agent.ID, "kind", WakeTest, "status", res.Status)
	return res, nil
}

// WakeSenderConfig tunes RunSender and SendDue. Zero values mean defaults.
type WakeSenderConfig struct {
	// Concurrency is how many wakes are sent at once (default 8).
	Concurrency int
	// Poll is how often the queue is read without a hint (default 1 s):
	// the most a due wake waits beyond its time.
	Poll time.Duration
	// Timeout bounds one wake request (default 15 s).
	Timeout time.Duration
	// Keep is how long finished wakes stay visible (default 7 days).
	Keep time.Duration
}

func (c *WakeSenderConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.Keep <= 0 {
		c.Keep = 7 * 24 * time.Hour
	}
}

// RunSender sends due wakes until ctx ends, on any number of instances at
// once: each wake is claimed by one sender, with a lease that outlasts its
// request. It reads the queue when told (WakeSubject) and every Poll.
func (s *WakeService) RunSender(ctx context.Context, cfg WakeSenderConfig) error {
	cfg.defaults()
	w, err := s.bus.Watch(ctx, WakeSubject)
	if err != nil {
		return err
	}
	defer w.Close()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	var pruned time.Time
	for {
		n, err := s.SendDue(ctx, cfg)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("claim wakes", "err", err)
		}
		if now := s.Now(); now.Sub(pruned) > time.Hour {
			pruned = now
			if _, err := s.store.PruneWakes(ctx, now.Add(-cfg.Keep)); err != nil && ctx.Err() == nil {
				s.log.Warn("prune wakes", "err", err)
			}
		}
		if n == cfg.Concurrency && ctx.Err() == nil {
			continue // there may be more due now
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.C():
			if !ok {
				return ErrBusClosed
			}
		case <-poll.C:
		}
	}
}

// wakeRecordTimeout bounds the recording of an outcome once the sender's
// context has ended.
const wakeRecordTimeout = 5 * time.Second

// SendDue claims the wakes due now (at most cfg.Concurrency), sends them
// concurrently and records each outcome. It returns how many it claimed.
func (s *WakeService) SendDue(ctx context.Context, cfg WakeSenderConfig) (int, error) {
	cfg.defaults()
	holder := "wake/" + s.InstanceID
	wakes, err := s.store.ClaimWakes(ctx, holder, cfg.Concurrency, cfg.Timeout+30*time.Second)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, w := range wakes {
		wg.Go(func() { s.send(ctx, holder, w, cfg) })
	}
	wg.Wait()
	return len(wakes), nil
}

// send makes one attempt of a claimed wake and records its outcome.
func (s *WakeService) send(ctx context.Context, holder string, w *Wake, cfg WakeSenderConfig) {
	log := s.log.With("wake_id", w.ID, "agent_id", w.AgentID, "context_id", w.ContextID, "kind", w.Kind, "tasks", len(w.TaskIDs))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wakeRecordTimeout+cfg.Timeout)
	defer cancel()
	giveBack := func() {
		if _, err := s.store.RetryWake(rctx, w.ID, holder, s.Now(), false, w.LastStatus, w.LastError); err != nil {
			log.Warn("give back a wake cut short by shutdown", "err", err)
		}
	}
	agent, err := s.agents.FindAgentByID(ctx, w.AgentID)
	if err == nil {
		var cfgW *WakeConfig
		if cfgW, err = s.store.FindWakeConfig(ctx, w.AgentID); err == nil {
			s.attempt(ctx, rctx, log, holder, agent, cfgW, w, cfg, giveBack)
			return
		}
	}
	if ctx.Err() != nil {
		giveBack()
		return
	}
	if ErrorCode(err) == ENOTFOUND {
		log.Info("wake_dropped", "reason", "the agent or its wake configuration is gone")
		s.finish(rctx, log, holder, w, WakeDropped, 0, "the agent or its wake configuration is gone")
		return
	}
	log.Warn("read the wake's agent", "err", err) // the lease ends and it is sent again
}

// attempt calls the receiver and records what came of it.
func (s *WakeService) attempt(ctx, rctx context.Context, log *slog.Logger, holder string, agent *Agent, cfgW *WakeConfig, w *Wake, cfg WakeSenderConfig, giveBack func()) {
	actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	res, err := s.waker.Wake(actx, agent, cfgW, w)
	cancel()
	switch {
	case err != nil && ctx.Err() != nil:
		giveBack()
	case err != nil && errors.Is(err, ErrWakeRefused):
		log.Warn("wake_refused", "err", err)
		s.finish(rctx, log, holder, w, WakeFailed, 0, err.Error())
	case err != nil:
		s.retry(rctx, log, holder, w, 0, "", err.Error())
	case res.Status/100 == 2:
		log.Info("wake_sent", "status", res.Status)
		s.finish(rctx, log, holder, w, WakeSent, res.Status, "")
	case res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable:
		s.retry(rctx, log, holder, w, res.Status, res.RetryAfter, "HTTP "+strconv.Itoa(res.Status))
	default:
		log.Warn("wake_failed", "status", res.Status, "body", res.Body)
		s.finish(rctx, log, holder, w, WakeFailed, res.Status, "HTTP "+strconv.Itoa(res.Status)+": "+res.Body)
	}
}

// retry queues the wake again after Retry-After, or drops it past
// WakeMaxRetries.
func (s *WakeService) retry(ctx context.Context, log *slog.Logger, holder string, w *Wake, status int, retryAfter, lastErr string) {
	if w.Retries >= WakeMaxRetries {
		log.Warn("wake_dropped", "status", status, "retries", w.Retries, "err", lastErr)
		s.finish(ctx, log, holder, w, WakeDropped, status, lastErr)
		return
	}
	now := s.Now()
	wait := RetryAfter(retryAfter, now)
	log.Info("wake_requeued", "status", status, "retry_in", wait, "err", lastErr)
	if _, err := s.store.RetryWake(ctx, w.ID, holder, now.Add(wait), true, status, lastErr); err != nil {
		log.Warn("record wake outcome", "err", err)
		return
	}
	s.outcome("retried")
}

func (s *WakeService) finish(ctx context.Context, log *slog.Logger, holder string, w *Wake, state WakeState, status int, lastErr string) {
	if _, err := s.store.FinishWake(ctx, w.ID, holder, state, status, lastErr); err != nil {
		log.Warn("record wake outcome", "err", err)
		return
	}
	s.outcome(string(state))
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date) and
// clamps it to WakeRetryAfterMin–WakeRetryAfterMax; absent or unreadable,
// it is WakeRetryAfterDefault.
func RetryAfter(header string, now time.Time) time.Duration {
	header = strings.TrimSpace(header)
	d := WakeRetryAfterDefault
	if n, err := strconv.ParseInt(header, 10, 64); err == nil && n >= 0 {
		d = time.Duration(min(n, int64(WakeRetryAfterMax/time.Second)+1)) * time.Second
	} else if t, err := http.ParseTime(header); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, WakeRetryAfterMin), WakeRetryAfterMax)
}
