package a2aedge

import (
	"context"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2arpc"
)

// The seam of the other bindings (package a2abind): HTTP+JSON and gRPC
// reach an address through the SDK's transports, and each of their calls
// is the same Call a JSON-RPC method takes, authenticated by the same
// Authenticate and run by the same methods.

// Target is the address a call reached: an agent's or a community's.
type Target = rpcTarget

// AgentTarget is the address addr of agent.
func AgentTarget(agent *switchboard.Agent, addr string) Target {
	return rpcTarget{agent: agent, addr: addr}
}

// CommunityTarget is the address addr of community c.
func CommunityTarget(c *switchboard.Community, addr string) Target {
	return rpcTarget{community: c, addr: addr}
}

// Agent returns the agent of an agent's address, nil at a community's.
func (t rpcTarget) Agent() *switchboard.Agent { return t.agent }

// Caller is an authenticated caller of an address.
type Caller = rpcCaller

// Peer returns the peer the caller is.
func (c rpcCaller) Peer() switchboard.Peer { return c.peer }

// Authenticate returns the caller the request's bearer token names, if it
// opens the address t (caller.go).
func (s *Edge) Authenticate(r *http.Request, t Target) (Caller, error) {
	return s.authenticateCaller(r, t)
}

// Call is an authenticated call of an A2A method at an address.
type Call = rpcCall

// NewCall returns the call of method (for logs) by caller at t, in the
// protocol version v.
func NewCall(method string, t Target, caller Caller, v switchboard.ProtocolVersion) *Call {
	return &rpcCall{req: &a2arpc.Request{ID: a2arpc.NullID, Method: method}, agent: t.agent, community: t.community,
		peer: caller.peer, caller: caller, version: v, addr: t.addr, lastEventID: -1}
}

// Peer returns the peer that makes the call.
func (c *rpcCall) Peer() switchboard.Peer { return c.peer }

// ReadLastEventID reads the Last-Event-ID a reconnecting SSE client sent.
func (c *rpcCall) ReadLastEventID(r *http.Request) error { return parseLastEventID(r, c) }

// ErrPushNotSupported refuses the push configuration methods while push
// notifications are off.
var ErrPushNotSupported = errPushNotSupported

// SendHistoryLength is the history length a SendMessage asks for.
func SendHistoryLength(p *a2a.SendMessageRequest) *int { return sendHistoryLength(p) }

// CommunityFromPath finds the community the {name} of the path names,
// answering 404 itself when there is none.
func (s *Edge) CommunityFromPath(w http.ResponseWriter, r *http.Request) (*switchboard.Community, bool) {
	return s.communityFromPath(w, r)
}

// GetTask is the GetTask method.
func (s *Edge) GetTask(ctx context.Context, c *Call, id a2a.TaskID, historyLength *int) (*a2a.Task, error) {
	return s.getTask(ctx, c, id, historyLength)
}

// ListTasksParams are ListTasks' parameters.
type ListTasksParams = listTasksParams

// ListTasks is the ListTasks method.
func (s *Edge) ListTasks(ctx context.Context, c *Call, p *ListTasksParams) (*a2a.ListTasksResponse, error) {
	out, err := s.listTasks(ctx, c, p)
	if err != nil {
		return nil, err
	}
	return &a2a.ListTasksResponse{Tasks: out.Tasks, TotalSize: out.TotalSize, PageSize: out.PageSize, NextPageToken: out.NextPageToken}, nil
}

// CancelTask is the CancelTask method.
func (s *Edge) CancelTask(ctx context.Context, c *Call, id a2a.TaskID) (*switchboard.Task, error) {
	return s.cancelTask(ctx, c, id)
}

// SendAndWait is a SendMessage that waits for the task as blocking asks.
func (s *Edge) SendAndWait(ctx context.Context, c *Call, p *a2a.SendMessageRequest) (*switchboard.Task, error) {
	return s.sendAndWait(ctx, c, p)
}

// StreamPlan is what a stream sends: a snapshot, then the task's events.
type StreamPlan = streamPlan

// SendStreamPlan is the plan of SendStreamingMessage: it sends the message
// and plans its stream.
func (s *Edge) SendStreamPlan(ctx context.Context, c *Call, p *a2a.SendMessageRequest) (StreamPlan, error) {
	return s.sendStream(ctx, c, p)
}

// SubscribePlan is the plan of SubscribeToTask.
func (s *Edge) SubscribePlan(ctx context.Context, c *Call, id a2a.TaskID) (StreamPlan, error) {
	return s.subscribePlan(ctx, c, id)
}

// AcquireStream counts a stream of the peer against its allowance; ok
// false when it has as many open as it may.
func (s *Edge) AcquireStream(p switchboard.Peer) (release func(), ok bool) { return s.acquireStream(p) }

// Sink is where a stream's events go.
type Sink interface {
	Start() error
	Send(seq int64, ev a2a.Event, final bool) error
	Fail(err error)
	KeepAlive() error
}

// sinkOf adapts a Sink to the streamSink of followStream.
type sinkOf struct{ Sink }

func (k sinkOf) start() error                                   { return k.Start() }
func (k sinkOf) send(seq int64, ev a2a.Event, final bool) error { return k.Send(seq, ev, final) }
func (k sinkOf) fail(err error)                                 { k.Fail(err) }
func (k sinkOf) keepAlive() error                               { return k.KeepAlive() }

// FollowStream sends the plan's events to sink until the task ends or the
// stream does.
func (s *Edge) FollowStream(ctx context.Context, r *http.Request, sink Sink, c *Call, plan StreamPlan) {
	s.followStream(ctx, r, sinkOf{sink}, c, plan)
}

// Version returns the protocol version of the call.
func (c *rpcCall) Version() switchboard.ProtocolVersion { return c.version }

// ExtendedCard is the GetExtendedAgentCard method: the card as its JSON.
func (s *Edge) ExtendedCard(ctx context.Context, c *Call) (any, error) {
	return s.v1GetExtendedAgentCard(ctx, c)
}

// TakesPairing reports whether agent takes pairing requests on this
// server: never when the server runs no pairing.
func (s *Edge) TakesPairing(agent *switchboard.Agent) bool { return s.takesPairing(agent) }

// LookupCommunity finds the community of the name; ENOTFOUND when there
// is none, and always without the network.
func (s *Edge) LookupCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	return s.communities(ctx, name)
}
