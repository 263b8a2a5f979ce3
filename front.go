package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Front is the upstream of an agent in front mode: an A2A server that
// already runs at an https URL, which the agent's address fronts
// (docs/front.md). Peers talk to the address; Switchboard forwards their
// work to the upstream with the owner's credentials.
type Front struct {
	AgentID string
	// Upstream is the upstream's A2A JSON-RPC endpoint.
	Upstream string
	// CardURL is where its agent card is read; empty means the well-known
	// paths under Upstream, then under its origin. It must be on
	// Upstream's origin: the card is fetched with the credentials.
	CardURL string
	// Credentials go upstream with every request to its origin. They are
	// sealed at rest and never returned by the API.
	Credentials FrontCredentials
	// Record is what the front keeps of its peers' tasks: FrontRecordTask
	// (a durable record of every task) or FrontRecordNone (pass-through).
	Record string
	// LastFailure is the last upstream failure, classified; nil if none
	// since the front was set up.
	LastFailure *FrontFailure
	UpdatedAt   time.Time
}

// What a front records of its peers' tasks (Front.Record).
const (
	// FrontRecordTask keeps a durable record of every task: our own ids,
	// ListTasks, pushes, resumable streams, answers across a restart.
	FrontRecordTask = "task"
	// FrontRecordNone passes each call through to the upstream without a
	// record: the ids are mapped in memory, bounded, on one instance.
	FrontRecordNone = "none"
)

// PassThrough reports whether the front keeps no record of its tasks.
func (f *Front) PassThrough() bool { return f != nil && f.Record == FrontRecordNone }

// CheckFrontRecord returns EINVALID unless v is a record mode.
func CheckFrontRecord(v string) error {
	if v != FrontRecordTask && v != FrontRecordNone {
		return Errorf(EINVALID, "record must be %q (a durable record of every task) or %q (pass-through)", FrontRecordTask, FrontRecordNone)
	}
	return nil
}

// FrontCredentials are the owner's credentials for an upstream.
type FrontCredentials struct {
	Bearer  string            `json:"bearer,omitempty"`  // sent as Authorization: Bearer
	Headers map[string]string `json:"headers,omitempty"` // fixed headers, such as an access service's pair
}

// Empty reports whether there is no credential at all.
func (c FrontCredentials) Empty() bool { return c.Bearer == "" && len(c.Headers) == 0 }

// FrontFailure is an upstream failure as the owner sees it. Reason is one
// of the FrontReason values.
type FrontFailure struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Status int       `json:"status,omitempty"` // the upstream's HTTP status, if it answered
	Method string    `json:"method,omitempty"` // what was being done: the A2A method, or "card"
	Peer   string    `json:"peer,omitempty"`   // the label of the peer whose work it was
	Detail string    `json:"detail,omitempty"` // what happened, for the owner (never the credentials)
}

// Reasons of an upstream's answer, as the owner's diagnostics name them.
const (
	FrontReachable            = "reachable"              // a JSON-RPC answer; TaskNotFound over HTTP+JSON or gRPC
	FrontAuthMissing          = "upstream_auth_missing"  // 401/403 and no bearer was sent
	FrontAuthRejected         = "upstream_auth_rejected" // 401/403 to the bearer sent
	FrontAccessMissing        = "access_credentials_missing"
	FrontAccessRejected       = "access_rejected"
	FrontTunnelDown           = "tunnel_down"
	FrontUnavailable          = "upstream_unavailable" // a 5xx without JSON-RPC
	FrontNetwork              = "network"              // no answer at all
	FrontUnexpected           = "unexpected_response"
	FrontMisconfigured        = "misconfigured"
	FrontTooLarge             = "response_too_large"
	FrontRedirected           = "redirected" // redirects are not followed
	FrontUnsupportedInterface = "no_supported_interface"
)

// FrontStore keeps agents' upstreams and the upstream ids of their tasks.
type FrontStore interface {
	// PutFront sets an agent's upstream URLs, keeping its credentials.
	PutFront(ctx context.Context, agentID, upstream, cardURL string) error

	// SetFrontCredentials replaces an agent's upstream credentials, or
	// returns ENOTFOUND if the agent has no front.
	SetFrontCredentials(ctx context.Context, agentID string, c FrontCredentials) error

	// FindFront returns an agent's front, or ENOTFOUND.
	FindFront(ctx context.Context, agentID string) (*Front, error)

	// SetFrontRecord sets what an agent's front records of its tasks
	// (FrontRecordTask or FrontRecordNone), or returns ENOTFOUND if the
	// agent has no front.
	SetFrontRecord(ctx context.Context, agentID, record string) error

	// RecordFrontFailure keeps f as the agent's last upstream failure.
	RecordFrontFailure(ctx context.Context, agentID string, f *FrontFailure) error

	// MapFrontTask records the upstream's ids of one of our tasks, and the
	// upstream context of our context for the task's peer. Ids already
	// recorded are kept: the first the upstream named stands.
	MapFrontTask(ctx context.Context, m FrontTaskMap) error

	// FindFrontTask returns the upstream's ids of our task, or ENOTFOUND.
	FindFrontTask(ctx context.Context, taskID a2a.TaskID) (*FrontTaskMap, error)

	// FindFrontContext returns the upstream's context of a peer's context
	// on an agent, or "" if the upstream has not named one.
	FindFrontContext(ctx context.Context, agentID, peerID, contextID string) (string, error)
}

// FrontTaskMap ties one of our tasks to the upstream's task and context.
// Contexts are kept per peer: two peers that name the same context id
// never share an upstream conversation.
type FrontTaskMap struct {
	TaskID            a2a.TaskID
	AgentID           string
	PeerID            string
	ContextID         string
	UpstreamTaskID    string
	UpstreamContextID string
}
