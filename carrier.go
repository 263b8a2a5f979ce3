package switchboard

import "context"

// Carrier carries messages that hold data between the parts of a
// deployment, in one process or across instances, addressed by subject as
// the Bus addresses its hints. The live sessions between connected agents
// (package session) send their frames on it: the two ends of a session may
// be held by two instances.
//
// It is apart from Bus on purpose. A hint says only "look again": hints
// merge, and a lost one costs a poll, because the store holds the truth. A
// message here is the data itself, which no store keeps: messages never
// merge, the messages one caller publishes on one subject arrive in the
// order it published them, and their loss is the receiver's to notice
// (live sessions number their frames and ask for what is missing). The
// consumers of hints (the task service, pushes, wakes, the HTTP API) see
// none of this, and a wrapper of the Bus (a metered one, a test's fake)
// need not carry data.
//
// membus.Bus and natsbus.Bus implement both; internal/bustest holds the
// contract of each.
type Carrier interface {
	// Publish hands data to every subscriber of the subject, on any
	// instance, at most once. The messages one caller publishes on one
	// subject reach each subscriber in that order. Publish does not wait
	// for subscribers on other instances and never queues without bound:
	// a subscriber that cannot keep up loses messages. A subscriber in
	// this process may be called before Publish returns. Publish takes
	// data: the caller must not change it afterwards. It returns
	// ErrBusClosed once the bus is closed.
	Publish(ctx context.Context, subject string, data []byte) error
	// Subscribe calls fn with the data of each message published on the
	// subject from then on, until the subscription is closed. fn must
	// return at once (it runs on the publisher's goroutine for a message
	// published in this process, on the bus's own for one from another
	// instance) and may be called concurrently with itself for messages
	// of different publishers; it may Publish; it must not change data,
	// which it may keep. A message published by another instance right
	// after Subscribe returns may be missed while the subscription
	// reaches the other servers of a cluster; one published afterwards
	// by this process, and anything published in answer to it, is not.
	// It returns ErrBusClosed once the bus is closed.
	Subscribe(ctx context.Context, subject string, fn func(data []byte)) (Subscription, error)
}

// Subscription is an open subscription to a Carrier's subject.
type Subscription interface {
	// Close ends the subscription: fn is not called for messages
	// published after it returns (a Publish already running may still
	// call it once). It is safe to call more than once.
	Close()
}

// LiveSessionSubject is the subject of one end of a live session: the
// agent agentID's end of session sessionID. The instance that holds the
// agent's connection subscribes to it; the other end's instance publishes
// the session's frames and controls on it.
func LiveSessionSubject(sessionID, agentID string) string {
	return "session." + sessionID + "." + agentID
}

// LiveSessionInstanceSubject is the subject on which instanceID is asked to
// offer a new live session to an agent connected to it.
func LiveSessionInstanceSubject(instanceID string) string { return "sessions." + instanceID }
