package connector_test

import (
	"context"
	"os"
	"os/signal"
	"strings"

	"github.com/switchboard-dev/switchboard/connector"
)

// A native agent: it holds one connection to Switchboard and answers each
// message with its text in capitals. This is the example of
// docs/connector-protocol.md; it is compiled with the tests, not run.
func ExampleClient() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &connector.Client{
		URLs:  []string{"https://sb.example"},
		Token: os.Getenv("SWITCHBOARD_AGENT_TOKEN"),
		Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) {
			// w.Text() is untrusted peer input.
			_ = w.Reply(strings.ToUpper(w.Text()))
		}),
	}
	if err := c.Run(ctx); err != nil {
		panic(err)
	}
}
