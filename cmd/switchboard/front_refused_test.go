package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
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

// TestFrontRefusedInFlight: a task whose agent is deleted while it is in
// flight, unwritten and unanswered, is refused when it comes to be
// written; the front then cancels the upstream's task as soon as the
// upstream names it, and the peer's call ends with an error.
//
// The task is written as created when no answer came within the relay's
// EarlyWriteAfter; the agent must be deleted before that, so the test
// gives it five seconds, not half of one, which a loaded machine's CLI
// call has outlasted.
func TestFrontRefusedInFlight(t *testing.T) {
	up := newUpstreamAgent(t, "1.0", true, upstreamOptions{tls: true})
	m := frontMain(t, up, func(c *server.Config) { c.EarlyWriteAfter = 5 * time.Second })
	peerToken := createFront(t, m, "doomed", up.srv.URL+"/invoke")
	answered := make(chan string, 1)
	go func() {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"slow"}]}}}`
		req, _ := http.NewRequest("POST", m.URL()+"/a/doomed", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+peerToken)
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	up.waitStarted(t, "slow") // sent, and held upstream before its first event
	cli(t, m, "agent", "delete", "doomed")
	if got := <-answered; !strings.Contains(got, `"error"`) {
		t.Fatalf("the peer got %s, want an error", got)
	}
	close(up.gate) // the upstream names its task now
	up.waitCanceled(t, "the upstream's task of a refused task was not canceled")
}

// TestFrontCancel: a peer's cancel of a front's task reaches the upstream,
// whether the upstream named its task already or names it only later.
func TestFrontCancel(t *testing.T) {
	for name, text := range map[string]string{"Named": "wait", "NotYetNamed": "slow"} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", true, upstreamOptions{tls: true})
			m := frontMain(t, up)
			peerToken := createFront(t, m, "canceled", up.srv.URL+"/invoke")
			task := peerSend(t, m, "canceled", peerToken, "m1", text, "", false)
			up.waitStarted(t, text)
			if text == "wait" {
				// The upstream's task is named once its first answer is written.
				testwait.For(t, "the upstream's first answer", func() bool {
					return peerCall(t, m, "canceled", peerToken, "GetTask", map[string]any{"id": task.ID}).Status.State == "TASK_STATE_WORKING"
				})
			}
			if got := peerCall(t, m, "canceled", peerToken, "CancelTask", map[string]any{"id": task.ID}); got.Status.State != "TASK_STATE_CANCELED" {
				t.Fatalf("CancelTask: %+v", got)
			}
			if text == "slow" {
				close(up.gate) // the upstream names its task now
			}
			up.waitCanceled(t, "the cancel did not reach the upstream agent")
		})
	}
}

// TestForwarderCardReadCutShort: a job that ends while the upstream's card
// is read leaves the card unknown, not missing: the next job reads it, and
// speaks the upstream's version (0.3 here), not the fallback's.
func TestForwarderCardReadCutShort(t *testing.T) {
	up := newUpstreamAgent(t, "0.3-pure", false)
	gate := make(chan struct{})
	up.holdCard(gate)
	fw := front.NewForwarder(front.Config{Target: up.srv.URL + "/invoke", WholeURL: true, FallbackCard: true, Blocking: true,
		HTTP: up.srv.Client(), Timeout: 30 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	job := func(id string) (*front.Job, *[]a2a.Event, *[]string) {
		var events []a2a.Event
		var failed []string
		return &front.Job{TaskID: a2a.TaskID(id), ContextID: "c-" + id, NewTask: true, From: "bob",
			Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hello")}},
			Update:  func(ev a2a.Event) error { events = append(events, ev); return nil },
			Fail:    func(reason string, _ error) { failed = append(failed, reason) },
		}, &events, &failed
	}
	ctx, cancel := context.WithCancel(context.Background())
	first, _, _ := job("m1")
	done := make(chan error, 1)
	go func() { done <- fw.Handle(ctx, first) }()
	testwait.For(t, "the card read", func() bool {
		for _, r := range up.received() {
			if strings.Contains(r, " /.well-known/") {
				return true
			}
		}
		return false
	})
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the job cut short while reading the card succeeded")
	}
	close(gate)
	second, events, failed := job("m2")
	if err := fw.Handle(context.Background(), second); err != nil || len(*failed) != 0 || len(*events) == 0 {
		t.Fatalf("the next job: %v, failures %q, %d events", err, *failed, len(*events))
	}
}
