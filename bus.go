package switchboard

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Bus moves hints between the parts of a deployment, in one process or
// across instances. It never carries the truth: every change is persisted
// in the Store first, and the Bus only says "look again". A lost or late
// hint delays a reader until its next poll; it never loses anything.
//
// Hints are addressed by subject: TaskSubject for a task's event log,
// AgentSubject for the work waiting for an agent, AgentChangeSubject for
// the agent itself, TokensSubject for its peer tokens.
type Bus interface {
	// Notify wakes every watcher of the subject, on any instance. It does
	// not block on slow watchers.
	Notify(ctx context.Context, subject string) error

	// Watch starts watching a subject. The watch's channel receives a value
	// after each Notify of the subject; notifications that arrive while one
	// is pending are merged into it. The caller must Close the watch. It
	// returns ErrBusClosed after Close.
	Watch(ctx context.Context, subject string) (Watch, error)

	// WatchFunc is Watch for a watcher that holds no goroutine while it
	// waits: the bus calls notify(false) after each Notify of the subject,
	// and notify(true) once when the bus closes; never after the watch's
	// Close has returned. notify must return at once and must not call
	// the bus (the bus may hold its lock while it runs); it may be called
	// from any goroutine, never twice at a time. The watch's C is nil. ctx
	// bounds the call that starts the watch, not the watch.
	WatchFunc(ctx context.Context, subject string, notify func(closed bool)) (Watch, error)

	// Close stops the bus and closes every watch.
	Close() error
}

// Watch is an open watch on one subject.
type Watch interface {
	// C returns a channel that receives a value when the subject was
	// notified. It is closed when the bus closes. It is nil for a watch
	// made by WatchFunc.
	C() <-chan struct{}
	// Close ends the watch. It is safe to call more than once.
	Close()
}

// TaskSubject is the subject of a task's event log: notified after events
// are appended, watched by streams and blocking calls.
func TaskSubject(id a2a.TaskID) string { return "task." + string(id) }

// AgentSubject is the subject of the work for an agent: notified when work
// is queued for it, watched by whatever holds its connection, which then
// offers the work.
func AgentSubject(agentID string) string { return "agent." + agentID }

// AgentChangeSubject is the subject of an agent itself: notified when its
// settings change, its agent token is replaced, its account is disabled,
// it is deleted, or a newer connection takes over its session; watched by
// whatever holds its connection, which then reads the agent, its session
// and its token again (and offers work the change may have let through).
// It is apart from AgentSubject so that queued work, the frequent hint,
// costs no such reread.
func AgentChangeSubject(agentID string) string { return "agentchange." + agentID }

// TokensSubject is the subject of the peer tokens of an agent: notified when
// one is revoked or replaced, or the agent or its account goes away,
// watched by the streams those tokens opened, which then check their token
// again.
func TokensSubject(agentID string) string { return "tokens." + agentID }

// AccountAgentsSubject is the subject of an account's agents as the
// console shows them: notified when one connects, disconnects, is sent a
// new task or has its settings changed (relay.Service.UpdateAgent),
// watched by the account's (and the operator's) open consoles, which then
// read the list again.
func AccountAgentsSubject(accountID string) string { return "agents." + accountID }

// AccountsSubject is notified when an account is created, watched by the
// operator's open consoles, which then watch its agents too.
const AccountsSubject = "accounts"

// CommunityTokensSubject is TokensSubject for the peer tokens of a
// community's address.
func CommunityTokensSubject(name string) string { return "tokens.c." + name }

// DispatchSubject is notified when work is queued for agents of a mode that
// a dispatcher serves (webhook agents), so that it claims at once.
func DispatchSubject(mode DeliveryMode) string { return "dispatch." + string(mode) }

// PushSubject is notified when push notifications are queued, so that the
// push senders claim them at once rather than at their next poll.
const PushSubject = "push"

// WakeSubject is notified when a wake is queued that may be due at once
// (an outbound update, a configuration without debounce), so that a sender
// claims it without waiting for its poll.
const WakeSubject = "wake"
