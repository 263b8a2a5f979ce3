package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
)

// TestForwarderStopsARefusedTask: when our task cannot be written with
// the upstream's first answer (its peer's quota filled meanwhile, say),
// the forwarder cancels the task it started upstream, in each version and
// both ways of answering, and reports no failure: the upstream did
// nothing wrong.
func TestForwarderStopsARefusedTask(t *testing.T) {
	for _, version := range []string{"1.0", "0.3"} {
		for _, streaming := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/streaming=%v", version, streaming), func(t *testing.T) {
				up := newUpstreamAgent(t, version, streaming)
				fw := front.NewForwarder(front.Config{Target: up.srv.URL + "/invoke", WholeURL: true, Blocking: false,
					HTTP: up.srv.Client(), Timeout: 30 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
				var failed []string
				updates := 0
				job := &front.Job{TaskID: "ours", ContextID: "our-context", NewTask: true, From: "bob",
					Message: &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("ask")}}, // the upstream's task stays open: working, then input-required
					Update: func(a2a.Event) error {
						updates++
						return fmt.Errorf("%w: quota exceeded", switchboard.ErrTaskUnwritten)
					},
					Fail: func(reason string, _ error) { failed = append(failed, reason) },
				}
				err := fw.Handle(context.Background(), job)
				if !errors.Is(err, switchboard.ErrTaskUnwritten) || updates != 1 || len(failed) != 0 {
					t.Fatalf("Handle: %v after %d updates, failures %q; want ErrTaskUnwritten after one, and no failure", err, updates, failed)
				}
				select {
				case id := <-up.canceled:
					if id == "" || id == "ours" {
						t.Fatalf("canceled %q upstream, want the upstream's own task id", id)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the upstream's task was not canceled")
				}
			})
		}
	}
}
