package main

import (
	"context"
	"io"
	"iter"
	"net"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// referenceServer is an a2a-go v2 JSON-RPC server with an echo agent (or,
// for the inbox comparison, an agent that only files the task): the direct
// path the relay is compared with.
type referenceServer struct {
	url string
	srv *http.Server
}

// startReferenceServer serves executor on a free loopback port.
func startReferenceServer(executor a2asrv.AgentExecutor) (*referenceServer, error) {
	return serveOnLoopback(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(executor)))
}

// startFixedAnswerServer serves, on a free loopback port, a handler that
// reads each request whole and answers every one with the same SUBMITTED
// task, parsing nothing: what the peers and net/http alone carry on this
// machine, a ceiling for any server measured with these peers.
func startFixedAnswerServer() (*referenceServer, error) {
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"fixed","contextId":"fixed","status":{"state":"TASK_STATE_SUBMITTED"}}}}`)
	return serveOnLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 1<<20)); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
}

// serveOnLoopback serves h on a free loopback port.
func serveOnLoopback(h http.Handler) (*referenceServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return &referenceServer{url: "http://" + l.Addr().String() + "/", srv: srv}, nil
}

// stop closes the server.
func (r *referenceServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// echoExecutor answers the way the relay's load agents do: the task is
// created, gets the message's text as an artifact, and completes.
type echoExecutor struct{}

// Execute echoes the message's text.
func (echoExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(text)), nil) {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		}
	}
}

// Cancel cancels the task.
func (echoExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// submitExecutor answers the way an inbox agent's address does: the task
// is created, SUBMITTED, and nothing more happens to it. a2a-go keeps it
// in memory: the ceiling of peers, HTTP and JSON-RPC on this machine for
// the inbox scenario, with nothing stored durably.
type submitExecutor struct{}

// Execute files the task.
func (submitExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil {
			yield(a2a.NewSubmittedTask(ec, ec.Message), nil)
		}
	}
}

// Cancel cancels the task.
func (submitExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return echoExecutor{}.Cancel(ctx, ec)
}
