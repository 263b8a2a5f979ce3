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
	"time"

	"github.com/switchboard-dev/switchboard/connector"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "Switchboard base URL")
	token := flag.String("token", os.Getenv("SWITCHBOARD_AGENT_TOKEN"), "agent token")
	pause := flag.Duration("pause", 5*time.Second, "how long a task stays working before the answer")
	hold := flag.Duration("hold", 12*time.Second, "how long resubscribe tasks stay working (at least 2 × TCK_STREAMING_TIMEOUT)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	c := &connector.Client{
		URLs:       []string{*server},
		Token:      *token,
		Logger:     log,
		ClientName: "tckagent",
		// Its handlers only wait: start every task at once, so that the
		// suite sees each one working, as from its reference agent.
		MaxConcurrent: 256,
		Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) {
			handle(ctx, w, *pause, *hold)
		}),
	}
	if err := c.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "tckagent:", err)
		os.Exit(1)
	}
}

// handle answers one message like the suite's reference agent. The
// connector has already reported it working; the answer comes after
// pause (hold for resubscribe tests), unless the peer cancels first.
func handle(ctx context.Context, w *connector.Work, pause, hold time.Duration) {
	d := pause
	if strings.HasPrefix(w.MessageID, "test-resubscribe-message-id") {
		d = hold
	}
	if !wait(ctx, d) {
		return // canceled: the task is already canceled for the peer
	}
	_ = w.Reply(answer(w.Text()))
}

func answer(q string) string {
	switch l := strings.ToLower(q); {
	case strings.TrimSpace(q) == "":
		return "Hello! Please provide a message for me to respond to."
	case strings.Contains(l, "hello") || strings.Contains(l, "hi"):
		return "Hello World! Nice to meet you!"
	default:
		return fmt.Sprintf("Hello World! You said: '%s'. Thanks for your message!", q)
	}
}

// wait sleeps for d unless ctx ends first, and reports whether it slept.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
