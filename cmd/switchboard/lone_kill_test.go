package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// TestKillLoneInstanceUnderLoad kills (SIGKILL) a lone instance (SQLite,
// the in-process bus: it sends a connector agent's new task before writing
// it, and writes it once with the agent's answer) while peers send
// blocking messages, and starts it again on the same data and address.
// Every task a peer got an answer for is in the store as answered; every
// send that got no answer, sent again with its message id, is answered.
func TestKillLoneInstanceUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server process twice")
	}
	bin := buildSwitchboard(t)
	data := t.TempDir()
	args := []string{"--data", data, "--secret-key", clusterSecretKey, "--owner-token", clusterOwnerToken, "--rate-per-minute", "0"}
	p := startInstanceProcess(t, bin, args...)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, bases: []string{p.url}}
	_, agentToken, bob := c.agent("lone", nil)
	c.runAgent("lone", agentToken, []string{p.url}, func(ctx context.Context, w *connector.Work) {
		if err := w.Reply("done " + w.Text()); err != nil && ctx.Err() == nil {
			t.Logf("reply to task %s: %v", w.TaskID, err)
		}
	})

	const peers, killAfter = 4, 100
	type answered struct{ id, text string }
	var mu sync.Mutex
	var acked []answered     // tasks a peer got an answer for
	unanswered := []string{} // message ids of sends that got none
	var n atomic.Int64
	var killed sync.Once
	var wg sync.WaitGroup
	for peer := range peers {
		wg.Go(func() {
			for i := 0; ; i++ {
				msgID := fmt.Sprintf("lone-%d-%d", peer, i)
				id, state, answer, err := sendBlocking(p.url+"/a/lone", bob, msgID, msgID)
				if err != nil {
					mu.Lock()
					unanswered = append(unanswered, msgID)
					mu.Unlock()
					return // the instance is gone
				}
				if state != "TASK_STATE_COMPLETED" || answer != "done "+msgID {
					t.Errorf("%s: task %s answered %s %q", msgID, id, state, answer)
				}
				mu.Lock()
				acked = append(acked, answered{id, msgID})
				mu.Unlock()
				if n.Add(1) == killAfter {
					killed.Do(func() { _ = p.cmd.Process.Signal(syscall.SIGKILL) })
				}
			}
		})
	}
	wg.Wait()
	_ = p.cmd.Wait()
	t.Logf("killed after %d answered tasks; %d sends unanswered", len(acked), len(unanswered))

	again := startInstanceProcess(t, bin, append(args, "--addr", u.Host)...)
	for _, a := range acked {
		task := peerCallURL(t, again.url+"/a/lone", bob, "GetTask", map[string]any{"id": a.id})
		if task.Status.State != "TASK_STATE_COMPLETED" || task.answer() != "done "+a.text {
			t.Errorf("task %s, answered before the kill, is %s %q after it", a.id, task.Status.State, task.answer())
		}
	}
	// The agent reconnects; what got no answer is sent again, and is.
	for _, msgID := range unanswered {
		testwait.ForErr(t, "an unanswered send, sent again, answered", func() error {
			_, state, answer, err := sendBlocking(again.url+"/a/lone", bob, msgID, msgID)
			if err == nil && (state != "TASK_STATE_COMPLETED" || answer != "done "+msgID) {
				err = fmt.Errorf("%s: answered %s %q", msgID, state, answer)
			}
			return err
		})
	}
}

// sendBlocking sends a blocking message as the peer and returns the task
// of the answer: its id, its state and the text of its artifacts.
func sendBlocking(address, peerToken, messageID, text string) (id, state, answer string, err error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message": map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", address, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", "", err
	}
	defer resp.Body.Close()
	var a struct {
		Result *struct {
			Task peerTask `json:"task"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return "", "", "", err
	}
	if a.Error != nil || a.Result == nil {
		return "", "", "", fmt.Errorf("status %d: %+v", resp.StatusCode, a.Error)
	}
	return a.Result.Task.ID, a.Result.Task.Status.State, a.Result.Task.answer(), nil
}
