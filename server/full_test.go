package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/fulldisk"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// TestDiskFull runs a server whose data directory is on a small file
// system and fills it: sends are refused with 503, Retry-After and the
// JSON-RPC error -32052 "storage full", /readyz answers 503 with the cause
// while /healthz stays 200 (no restart into the same full disk), the tasks
// accepted before are all there, and once room is made the server takes
// work again without a restart.
func TestDiskFull(t *testing.T) {
	disk := fulldisk.Mount(t, 24<<20)
	s := run(t, server.Config{DataDir: disk.Dir, RatePerMinute: 0, MaxOpenTasks: -1, MaxPeerBytes: -1})
	owner := s.GeneratedOwnerToken
	call(t, s, "POST", "/agents", owner, `{"handle":"inbox","mode":"inbox"}`, http.StatusCreated)
	peer := call(t, s, "POST", "/agents/inbox/tokens", owner, `{"label":"bob"}`, http.StatusCreated)["token"].(string)

	disk.Fill(t, 384<<10)
	var accepted []string
	var refused *http.Response
	var answer map[string]any
	for i := range 10_000 {
		resp, body := send(t, s, peer, fmt.Sprintf("m%d", i))
		if resp.StatusCode != http.StatusOK {
			refused, answer = resp, body
			break
		}
		accepted = append(accepted, body["result"].(map[string]any)["task"].(map[string]any)["id"].(string))
	}
	if refused == nil {
		t.Fatal("10,000 sends of 8 KiB fit in 384 KiB")
	}
	if refused.StatusCode != http.StatusServiceUnavailable || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("a send on a full disk: %d, Retry-After %q; want 503 with Retry-After", refused.StatusCode, refused.Header.Get("Retry-After"))
	}
	e, _ := answer["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32052) || !strings.Contains(e["message"].(string), "storage full") {
		t.Fatalf("a send on a full disk answered %v", answer)
	}
	testwait.For(t, "/readyz to say the storage is full", func() bool {
		status, body := get(t, s, "/readyz")
		return status == http.StatusServiceUnavailable && body["status"] == "storage full"
	})
	if status, _ := get(t, s, "/healthz"); status != http.StatusOK {
		t.Fatalf("/healthz on a full disk: %d, want 200", status)
	}
	for _, id := range accepted {
		got := rpc(t, s, peer, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`)
		if got["error"] != nil {
			t.Fatalf("task %s accepted before the disk filled: %v", id, got["error"])
		}
	}

	disk.Empty(t)
	testwait.For(t, "/readyz to be ready once room is made", func() bool {
		status, _ := get(t, s, "/readyz")
		return status == http.StatusOK
	})
	if resp, body := send(t, s, peer, "after"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a send once room was made: %d %v", resp.StatusCode, body)
	}
}

// send sends an 8 KiB message to the inbox agent as the peer.
func send(t *testing.T, s *server.Server, peer, id string) (*http.Response, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + id +
		`","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 8<<10) + `"}]}}}`
	req, err := http.NewRequest("POST", s.URL()+"/a/inbox", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+peer)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("answer %d: %v", resp.StatusCode, err)
	}
	return resp, out
}

// rpc makes a JSON-RPC 1.0 call to the inbox agent as the peer.
func rpc(t *testing.T, s *server.Server, peer, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL()+"/a/inbox", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peer)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// call makes an owner API call and checks its status.
func call(t *testing.T, s *server.Server, method, path, token, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
	}
	return out
}

// get reads a public JSON path.
func get(t *testing.T, s *server.Server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(s.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
