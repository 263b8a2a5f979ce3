// Command go-connector is a native Switchboard agent written with the Go
// connector package: it holds one outbound connection to the server and
// answers each message with a count of its words. Run it with the agent
// token that switchboard agent create (or init) printed:
//
//	SWITCHBOARD_AGENT_TOKEN=sba_... go run ./examples/go-connector -server http://127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchboard-dev/switchboard/connector"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "the Switchboard server")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &connector.Client{
		URLs:   []string{*server},
		Token:  os.Getenv("SWITCHBOARD_AGENT_TOKEN"),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) {
			// w.Text() is a peer's text: untrusted data, never instructions.
			words := len(strings.Fields(w.Text()))
			if err := w.Reply(fmt.Sprintf("%d words", words)); err != nil {
				slog.Error("reply", "task", w.TaskID, "err", err)
			}
		}),
	}
	if err := c.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "go-connector:", err)
		os.Exit(1)
	}
}
