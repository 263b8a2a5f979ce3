package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// acked is a task the server acknowledged, and when.
type acked struct {
	id string
	at time.Time
}

// sendNow sends a message to the agent at handle as the peer, without
// waiting for an answer, and returns the id of the task acknowledged.
func sendNow(base, handle, peerToken, messageID string) (string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"backed up?"}]},"configuration":{"returnImmediately":true}}}`, messageID)
	req, _ := http.NewRequest("POST", base+"/a/"+handle, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
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

// backupFixture starts a server in a new data directory with an inbox
// agent (whose peer token it returns) and a webhook agent, whose secret
// is sealed with the data directory's key.
func backupFixture(t *testing.T) (*server.Server, string) {
	t.Helper()
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.RatePerMinute, c.MaxOpenTasks, c.MaxPeerBytes = 0, -1, -1 })
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	cli(t, m, "agent", "create", "hooked", "--mode", "webhook", "--endpoint", "https://hook.example/hook")
	var tok struct{ Token string }
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "desk", "bob")), &tok); err != nil || tok.Token == "" {
		t.Fatalf("token issue: %v", err)
	}
	return m, tok.Token
}

// TestBackupUnderLoad backs a server up while peers' messages keep being
// acknowledged, restores the file into a new data directory, and starts a
// server there: every task acknowledged before the backup began is in the
// copy, the copy's secrets open with the key the backup carried, and the
// operator's token file came along.
func TestBackupUnderLoad(t *testing.T) {
	m, bob := backupFixture(t)
	const senders, each = 4, 60
	var (
		mu   sync.Mutex
		acks []acked
		wg   sync.WaitGroup
	)
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				id, err := sendNow(m.URL(), "desk", bob, fmt.Sprintf("m-%d-%d", s, i))
				if err != nil {
					t.Errorf("send %d/%d: %v", s, i, err)
					return
				}
				mu.Lock()
				acks = append(acks, acked{id, time.Now()})
				mu.Unlock()
			}
		})
	}
	testwait.For(t, "the first acknowledged tasks", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acks) >= 40
	})
	file := filepath.Join(t.TempDir(), "switchboard.backup")
	began := time.Now()
	out, err := runCmd("--data", m.Config.DataDir, "backup", file)
	ended := time.Now()
	if err != nil {
		t.Fatalf("backup while serving: %v\n%s", err, out)
	}
	if !strings.Contains(out, "secret.key") || !strings.Contains(out, "keep it as secret") {
		t.Fatalf("backup does not say it holds the key:\n%s", out)
	}
	wg.Wait()
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}

	dst := filepath.Join(t.TempDir(), "restored")
	if out, err := runCmd("--data", dst, "restore", file); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	for _, name := range []string{seal.KeyFileName, server.OwnerTokenFile} {
		want, _ := os.ReadFile(filepath.Join(m.Config.DataDir, name))
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("restored %s differs: %v", name, err)
		}
	}
	copyMain := MustRunMain(t, dst, "")
	if copyMain.GeneratedOwnerToken != "" {
		t.Fatal("the copy made a new operator token: the restored operator was not found")
	}
	if out := cli(t, copyMain, "agent", "list"); !strings.Contains(out, "desk") || !strings.Contains(out, "hooked") {
		t.Fatalf("agents on the copy:\n%s", out)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(acks) != senders*each {
		t.Fatalf("%d tasks acknowledged, want %d", len(acks), senders*each)
	}
	before, during, inCopy := 0, 0, 0
	for _, a := range acks {
		found := copyMain.DB != nil && taskIn(t, copyMain, a.id)
		if found {
			inCopy++
		}
		switch {
		case a.at.Before(began):
			before++
			if !found {
				t.Errorf("task %s, acknowledged before the backup began, is not in the copy", a.id)
			}
		case a.at.Before(ended):
			during++
		}
	}
	if before == 0 || inCopy < before {
		t.Fatalf("%d tasks acknowledged before the backup, %d in the copy", before, inCopy)
	}
	t.Logf("%d tasks acknowledged before the backup, %d while it ran (%s), %d after; %d in the copy",
		before, during, ended.Sub(began).Round(time.Millisecond), len(acks)-before-during, inCopy)
}

// taskIn reports whether the server's store holds the task.
func taskIn(t *testing.T, m *server.Server, id string) bool {
	t.Helper()
	task, err := m.DB.FindTaskByID(context.Background(), a2a.TaskID(id))
	return err == nil && task != nil
}

// TestRestoreRefusesRunningServer: restore, even with --force, refuses a
// data directory a server has open, and the server keeps its data.
func TestRestoreRefusesRunningServer(t *testing.T) {
	m, bob := backupFixture(t)
	file := filepath.Join(t.TempDir(), "b.backup")
	if out, err := runCmd("--data", m.Config.DataDir, "backup", file); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	id, err := sendNow(m.URL(), "desk", bob, "after-backup")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCmd("--data", m.Config.DataDir, "restore", "--force", file)
	if err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Fatalf("restore onto a running server: %v\n%s", err, out)
	}
	if !taskIn(t, m, id) {
		t.Fatal("the refused restore changed the running server's database")
	}
}

// TestRestoreRefusesExistingDatabase: onto a stopped data directory that
// holds a database, restore refuses without --force and changes nothing;
// with --force it replaces the database, and a server starts on it.
func TestRestoreRefusesExistingDatabase(t *testing.T) {
	m, bob := backupFixture(t)
	dir := m.Config.DataDir
	file := filepath.Join(t.TempDir(), "b.backup")
	if out, err := runCmd("--data", dir, "backup", file); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	later, err := sendNow(m.URL(), "desk", bob, "after-backup")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd("--data", dir, "restore", file)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore over a database without --force: %v\n%s", err, out)
	}
	m2 := MustRunMain(t, dir, "")
	if !taskIn(t, m2, later) {
		t.Fatal("the refused restore changed the database")
	}
	if err := m2.Close(); err != nil {
		t.Fatal(err)
	}

	if out, err := runCmd("--data", dir, "restore", "--force", file); err != nil || !strings.Contains(out, "replaced the database") {
		t.Fatalf("restore --force: %v\n%s", err, out)
	}
	m3 := MustRunMain(t, dir, "")
	if taskIn(t, m3, later) {
		t.Fatal("after restore --force, the database still holds a task sent after the backup")
	}
	if out := cli(t, m3, "agent", "list"); !strings.Contains(out, "desk") {
		t.Fatalf("agents after restore --force:\n%s", out)
	}
}

// TestBackupWithoutKey: a backup made with --no-key names the key it
// lacks, restore says so too, and a server on the copy without that key
// refuses to start, naming it.
func TestBackupWithoutKey(t *testing.T) {
	m, _ := backupFixture(t)
	kf, err := seal.ReadKeyFile(filepath.Join(m.Config.DataDir, seal.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	keyID := seal.KeyID(kf.Keys[0])
	file := filepath.Join(t.TempDir(), "nokey.backup")
	var out, errOut bytes.Buffer
	if err := runIO(context.Background(), []string{"--data", m.Config.DataDir, "backup", "--no-key", file}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), keyID) || strings.Contains(out.String(), "secret.key") {
		t.Fatalf("backup --no-key:\n%s%s", out.String(), errOut.String())
	}
	dst := t.TempDir()
	out.Reset()
	errOut.Reset()
	if err := runIO(context.Background(), []string{"--data", dst, "restore", file}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), keyID) {
		t.Fatalf("restore of a backup without its key says:\n%s%s", out.String(), errOut.String())
	}
	s := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dst}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	err = s.Run(context.Background())
	_ = s.Close()
	if err == nil || !strings.Contains(err.Error(), keyID) {
		t.Fatalf("a server on the copy without its key started: %v", err)
	}
}
