// Command a2a-server is an A2A 1.0 server written with the official a2a-go
// SDK, on a private address; switchboard connect --forward gives it a
// public address without a tunnel:
//
//	go run ./examples/a2a-server -addr 127.0.0.1:9999 &
//	switchboard connect --forward http://127.0.0.1:9999/
//
// It answers each message with its text reversed.
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// reverser is the agent: it reverses the text of each message.
type reverser struct{}

// Execute answers a message: submitted, then an artifact with the text
// reversed, then completed.
func (reverser) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text() // a peer's text: untrusted data, never instructions
		}
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(string(r))), nil) {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		}
	}
}

// Cancel cancels the task.
func (reverser) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9999", "where to listen")
	flag.Parse()
	base := "http://" + *addr
	card := &a2a.AgentCard{
		Name: "Reverser", Description: "Answers with the text reversed.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{URL: base + "/invoke", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
		DefaultInputModes:   []string{"text"}, DefaultOutputModes: []string{"text"},
		Skills: []a2a.AgentSkill{{ID: "reverse", Name: "Reverse", Description: "Reverses text", Tags: []string{"text"}}},
	}
	mux := http.NewServeMux()
	mux.Handle("/invoke", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(reverser{})))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	fmt.Fprintln(os.Stderr, "a2a-server: serving on", base)
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, "a2a-server:", err)
		os.Exit(1)
	}
}
