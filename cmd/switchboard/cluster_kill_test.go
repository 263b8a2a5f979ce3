package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/natsbus"
)

// instanceProcess is a switchboard serve process.
type instanceProcess struct {
	cmd *exec.Cmd
	url string
}

// startInstanceProcess starts bin serve with args and waits until it says
// where it serves.
func startInstanceProcess(t *testing.T, bin string, args ...string) *instanceProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "text"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &instanceProcess{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg="switchboard is serving" url=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
			if testing.Verbose() {
				t.Log(sc.Text())
			}
		}
	}()
	select {
	case p.url = <-urls:
	case <-time.After(20 * time.Second):
		t.Fatal("the instance did not start within 20 s")
	}
	return p
}

// TestClusterKillInstance kills (SIGKILL) the instance an agent is
// connected to while peers send to all three. The agent reconnects to
// another instance; every task a peer got an answer for is delivered and
// answered, and no task reaches the agent's handler twice.
func TestClusterKillInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three server processes")
	}
	dsn := pgtest.DSN(t)
	bin := buildSwitchboard(t)
	var natsURLs []string
	var seedRoute string
	for i := range 3 {
		o := natsbus.ServerOptions{Name: fmt.Sprint("k", i), Listen: "127.0.0.1:0", ClusterListen: "127.0.0.1:0"}
		if i > 0 {
			o.Routes = []string{seedRoute}
		}
		s, err := natsbus.StartServer(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if i == 0 {
			seedRoute = "nats-route://" + s.ClusterAddr().String()
		}
		natsURLs = append(natsURLs, s.ClientURL())
	}
	var procs []*instanceProcess
	for i := range 3 {
		procs = append(procs, startInstanceProcess(t, bin, "--data", t.TempDir(), "--database", dsn, "--secret-key", clusterSecretKey,
			"--bus", natsURLs[i], "--owner-token", clusterOwnerToken, "--heartbeat", "1s", "--rate-per-minute", "0"))
	}
	c := &testCluster{t: t, dsn: dsn}
	for _, p := range procs {
		c.bases = append(c.bases, p.url)
	}
	_, agentToken, bob := c.agent("survivor", nil)

	var mu sync.Mutex
	runs := map[string]int{}
	urls := []string{procs[0].url, procs[1].url, procs[2].url}
	c.runAgent("survivor", agentToken, urls, func(ctx context.Context, w *connector.Work) {
		mu.Lock()
		runs[string(w.TaskID)]++
		mu.Unlock()
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return
		}
		if err := w.Reply("done " + w.Text()); err != nil {
			t.Logf("reply to task %s: %v", w.TaskID, err)
		}
	})

	const total, killAt = 150, 50
	var accepted sync.Map // task id → message text
	var sent, refused atomic.Int64
	var killed sync.Once
	var killedAt time.Time
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for p := range 4 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				if i == killAt {
					killed.Do(func() {
						_ = procs[0].cmd.Process.Signal(syscall.SIGKILL)
						killedAt = time.Now()
						t.Logf("killed instance 0 (pid %d) after %d sends", procs[0].cmd.Process.Pid, i)
					})
				}
				text := fmt.Sprint("task ", i)
				msgID := fmt.Sprintf("kill-%d-%d", p, i)
				// A peer that cannot reach one instance tries the next with the
				// same message id: the send is idempotent.
				for try := range 6 {
					id, err := trySend(procs[(int(i)+try)%3].url, bob, msgID, text)
					if err == nil {
						accepted.Store(id, text)
						sent.Add(1)
						break
					}
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d tasks accepted, %d sends refused by the dead instance and retried elsewhere", sent.Load(), refused.Load())
	if sent.Load() != total {
		t.Fatalf("only %d of %d sends were accepted", sent.Load(), total)
	}

	survivor := procs[1].url
	pending := map[string]string{} // task id → message text, until it ends
	accepted.Range(func(k, v any) bool {
		pending[k.(string)] = v.(string)
		return true
	})
	testwait.Within(t, time.Minute, "every accepted task to end", func() error {
		for id, text := range pending {
			task := peerCallURL(t, survivor+"/a/survivor", bob, "GetTask", map[string]any{"id": id})
			switch st := task.Status.State; {
			case st == "TASK_STATE_COMPLETED":
				if task.answer() != "done "+text {
					t.Errorf("task %s answered %q, want %q", id, task.answer(), "done "+text)
				}
			case strings.HasPrefix(st, "TASK_STATE_") && st != "TASK_STATE_SUBMITTED" && st != "TASK_STATE_WORKING":
				t.Errorf("task %s ended %s: %s", id, st, task.reason())
			default:
				return fmt.Errorf("task %s still %s after the kill", id, st)
			}
			delete(pending, id)
		}
		return nil
	})
	t.Logf("every accepted task was answered %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	for id, n := range runs {
		if n != 1 {
			t.Errorf("task %s reached the handler %d times", id, n)
		}
	}
	if len(runs) != total {
		t.Errorf("the handler ran for %d tasks, want %d", len(runs), total)
	}
}

// trySend sends a non-blocking message as the peer and returns the task id.
func trySend(base, peerToken, messageID, text string) (string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]},"configuration":{"returnImmediately":true}}}`, messageID, text)
	req, _ := http.NewRequest("POST", base+"/a/survivor", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`"task":\{"id":"([^"]+)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return string(m[1]), nil
}
