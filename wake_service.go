package switchboard

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
)

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
// and the bus only, like relay.Service.
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
	// AllowHTTP accepts wake URLs over plain http; without it a wake URL
	// must be https (WakeConfig.CheckScheme). Set it where the operator
	// opened the network guard, as the sender does.
	AllowHTTP bool
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
	if err := c.CheckScheme(s.AllowHTTP); err != nil {
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
	if r.Kind == "" {
		r.Kind = WakeOutboundUpdate
	}
	if err := r.normalize(); err != nil {
		return false, err
	}
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

// normalize checks that r can be queued and makes its peer-written parts
// safe to store and show: the preview redacted and trimmed, the sender's
// label on one line and bounded.
func (r *WakeRequest) normalize() error {
	if r.AgentID == "" || r.ContextID == "" {
		return Errorf(EINVALID, "a wake needs an agent and a context")
	}
	if len(r.ContextID) > maxWakeRefLen || len(r.TaskID) > maxWakeRefLen {
		return Errorf(EINVALID, "a wake's context and task ids are at most %d bytes", maxWakeRefLen)
	}
	if r.Kind != WakeInbound && r.Kind != WakeOutboundUpdate {
		return Errorf(EINVALID, "wake kind %q cannot be queued", r.Kind)
	}
	r.Preview = WakePreview(r.StoredPreview())
	r.Message = nil
	r.From = truncateRunes(strings.Join(strings.Fields(r.From), " "), 200)
	return nil
}
