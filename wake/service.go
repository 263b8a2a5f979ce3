package wake

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/redact"
)

// Retry rules for wakes answered with 429 or 503 (or not at all): the
// first retry waits RetryMin, each next one twice as long, and a longer
// Retry-After wins, up to RetryMax. A wake is retried at most
// switchboard.WakeMaxRetries times.
const (
	RetryMin = 30 * time.Second
	RetryMax = time.Hour
)

// Waker sends one wake to its receiver (the wake package, over the network
// guard). It returns the receiver's answer; an error means no answer came
// (refused address, timeout, connection failure, a body that could not be
// rendered).
type Waker interface {
	Wake(ctx context.Context, agent *switchboard.Agent, cfg *switchboard.WakeConfig, w *switchboard.Wake) (*Result, error)
}

// Result is a receiver's answer to a wake.
type Result struct {
	Status     int    // HTTP status
	RetryAfter string // the Retry-After header, as sent
	Body       string // the answer's body: as read (64 KiB at most), then printable, its secrets cut and trimmed by the service
}

// ErrRefused is wrapped by a Waker's errors that retrying cannot cure:
// an address the network guard refuses, a body template that does not
// render.
var ErrRefused = errors.New("wake refused")

// Service queues wakes and sends them. It is written against the store
// and the bus only, like relay.Service.
type Service struct {
	store  switchboard.WakeStore
	agents switchboard.AgentStore
	bus    switchboard.Bus
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

// Outcomes are the outcomes OnOutcome reports: sent (2xx), retried
// (429, 503 or no answer: queued again), failed (another status, or
// refused), dropped (retries used up, or the configuration gone).
var Outcomes = []string{"sent", "retried", "failed", "dropped"}

func (s *Service) outcome(o string) {
	if s.OnOutcome != nil {
		s.OnOutcome(o)
	}
}

// NewService returns a Service that sends through waker.
func NewService(store switchboard.WakeStore, agents switchboard.AgentStore, bus switchboard.Bus, waker Waker, log *slog.Logger) *Service {
	return &Service{store: store, agents: agents, bus: bus, waker: waker, log: log, Now: time.Now, InstanceID: switchboard.NewID()}
}

// SetConfig applies upd to the agent's wake configuration (creating it if
// there is none), checks the result and saves it.
func (s *Service) SetConfig(ctx context.Context, agent *switchboard.Agent, upd Update) (*switchboard.WakeConfig, error) {
	old, err := s.store.FindWakeConfig(ctx, agent.ID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		old = nil
	} else if err != nil {
		return nil, err
	}
	c, err := ApplyUpdate(agent.ID, old, upd, s.Now().UTC(), s.CheckTemplate)
	if err != nil {
		return nil, err
	}
	if err := CheckScheme(c, s.AllowHTTP); err != nil {
		return nil, err
	}
	if err := s.store.SaveWakeConfig(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the agent's wake configuration, or ENOTFOUND.
func (s *Service) Config(ctx context.Context, agent *switchboard.Agent) (*switchboard.WakeConfig, error) {
	c, err := s.store.FindWakeConfig(ctx, agent.ID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	}
	return c, err
}

// DeleteConfig removes the agent's wake configuration; its pending wakes
// are dropped.
func (s *Service) DeleteConfig(ctx context.Context, agent *switchboard.Agent) error {
	err := s.store.DeleteWakeConfig(ctx, agent.ID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return switchboard.Errorf(switchboard.ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	}
	return err
}

// Recent returns the agent's latest wakes, newest first.
func (s *Service) Recent(ctx context.Context, agent *switchboard.Agent, limit int) ([]*switchboard.Wake, error) {
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
func (s *Service) Enqueue(ctx context.Context, r switchboard.WakeRequest) (bool, error) {
	if r.Kind == "" {
		r.Kind = switchboard.WakeOutboundUpdate
	}
	if err := Normalize(&r); err != nil {
		return false, err
	}
	queued, err := s.store.EnqueueWake(ctx, &r)
	if err == nil && queued {
		if err := s.bus.Notify(ctx, switchboard.WakeSubject); err != nil {
			s.log.Warn("notify wake senders", "err", err)
		}
	}
	return queued, err
}

// Test sends one wake of kind test to the agent now, outside the queue and
// its cap, and returns the answer. An error that is not the receiver's
// answer (refused, timeout) is returned as an *Error the owner can read.
func (s *Service) Test(ctx context.Context, agent *switchboard.Agent) (*Result, error) {
	cfg, err := s.store.FindWakeConfig(ctx, agent.ID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent %s has no wake configuration", agent.Handle)
	} else if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	w := &switchboard.Wake{ID: switchboard.NewID(), AgentID: agent.ID, ContextID: "test", Kind: switchboard.WakeTest, Count: 1, State: switchboard.WakeSending,
		From: "switchboard", DueAt: now, CreatedAt: now, UpdatedAt: now}
	res, err := s.waker.Wake(ctx, agent, cfg, w)
	if err != nil {
		s.log.Info("wake_failed", "agent_id", agent.ID, "kind", switchboard.WakeTest, "err", err)
		return nil, switchboard.Errorf(switchboard.EINVALID, "the test wake was not answered: %s", err.Error())
	}
	res.Body = answerText(res.Body, cfg)
	s.log.Info("wake_sent", "agent_id", agent.ID, "kind", switchboard.WakeTest, "status", res.Status)
	return res, nil
}

// Normalize checks that r can be queued and makes its peer-written parts
// safe to store and show: the preview redacted and trimmed, the sender's
// label on one line and bounded.
func Normalize(r *switchboard.WakeRequest) error {
	if r.AgentID == "" || r.ContextID == "" {
		return switchboard.Errorf(switchboard.EINVALID, "a wake needs an agent and a context")
	}
	if len(r.ContextID) > maxWakeRefLen || len(r.TaskID) > maxWakeRefLen {
		return switchboard.Errorf(switchboard.EINVALID, "a wake's context and task ids are at most %d bytes", maxWakeRefLen)
	}
	if r.Kind != switchboard.WakeInbound && r.Kind != switchboard.WakeOutboundUpdate && r.Kind != switchboard.WakePairingRequest {
		return switchboard.Errorf(switchboard.EINVALID, "wake kind %q cannot be queued", r.Kind)
	}
	if r.Preview == "" && r.Message != nil {
		r.Preview = switchboard.MessageText(r.Message)
	}
	r.Preview = redact.Preview(r.Preview)
	r.Message = nil
	r.From = truncateRunes(strings.Join(strings.Fields(r.From), " "), 200)
	return nil
}
