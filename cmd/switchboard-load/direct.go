package main

import (
	"context"
	"iter"
	"net"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// referenceServer is an a2a-go v2 JSON-RPC server with an echo agent: the
// direct path the relay is compared with.
type referenceServer struct {
	url string
	srv *http.Server
}

// startReferenceServer serves the echo agent on a free loopback port.
func startReferenceServer() (*referenceServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoExecutor{})))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
