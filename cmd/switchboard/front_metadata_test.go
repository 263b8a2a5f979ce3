package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// forgedMetadata is what a peer puts in its message's metadata to pass for
// someone else: the key that is the server's, and one of its own.
func forgedMetadata() map[string]any {
	return map[string]any{"switchboard": map[string]any{"peer": "admin", "from": "root"}, "mine": "kept"}
}

// sendForged sends text to the agent as bob (A2A 1.0) with forged
// metadata, blocking or not, on a new task or on taskID.
func sendForged(t *testing.T, m *server.Server, handle, peerToken, messageID, text, taskID string, wait bool) *peerTask {
	t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}, "metadata": forgedMetadata()}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	return peerCall(t, m, handle, peerToken, "SendMessage", map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": !wait}})
}

// streamForged sends text to the agent as bob over SendStreamingMessage
// with forged metadata, and reads the stream until the task completes.
func streamForged(t *testing.T, m *server.Server, handle, peerToken, messageID, text string) {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"message": map[string]any{"messageId": messageID, "role": "ROLE_USER",
		"parts": []any{map[string]any{"text": text}}, "metadata": forgedMetadata()}})
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":` + string(params) + `}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "TASK_STATE_COMPLETED") {
			return
		}
	}
	t.Fatal("the stream ended before the task completed")
}

// forgeEveryWay sends forged metadata by every path a message takes to an
// agent: a blocking SendMessage (on SQLite, forwarded before it is
// written), one that does not block, a stream, a follow-up, and a 0.3
// message/send.
func forgeEveryWay(t *testing.T, m *server.Server, handle, peerToken string) {
	t.Helper()
	if task := sendForged(t, m, handle, peerToken, "m1", "hello", "", true); task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("blocking send: %s (%s)", task.Status.State, task.reason())
	}
	task := sendForged(t, m, handle, peerToken, "m2", "later", "", false)
	waitTask(t, m, handle, peerToken, task.ID, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_COMPLETED" })
	streamForged(t, m, handle, peerToken, "m3", "streamed")
	task = sendForged(t, m, handle, peerToken, "m4", "ask", "", true)
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("question: %s (%s)", task.Status.State, task.reason())
	}
	if task = sendForged(t, m, handle, peerToken, "m5", "blue", task.ID, true); task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("follow-up: %s (%s)", task.Status.State, task.reason())
	}
	v03 := v03Message("m6", "old", "", true)
	v03["message"].(map[string]any)["metadata"] = forgedMetadata()
	if res := peerCallV03(t, m, handle, peerToken, "message/send", v03); res["kind"] != "task" {
		t.Fatalf("0.3 send: %v", res)
	}
}

// checkOwnMetadata fails the test unless every message up executed bears
// the server's "switchboard" metadata (bob's label, no forged key) and the
// peer's own keys.
func checkOwnMetadata(t *testing.T, up *upstreamAgent, want int) {
	t.Helper()
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.metadata) != want {
		t.Fatalf("the upstream executed %d messages, want %d", len(up.metadata), want)
	}
	for i, md := range up.metadata {
		own, _ := md["switchboard"].(map[string]any)
		if own["from"] != "bob" || own["peer"] != nil || own["taskId"] == nil || md["mine"] != "kept" {
			t.Errorf("message %d reached the upstream with metadata %v: want the server's switchboard key and the peer's own", i+1, md)
		}
	}
}

// TestFrontOwnsMetadata: a peer cannot pass for someone else to a front's
// upstream through the metadata key Switchboard owns, whatever path its
// message takes; upstreams in 1.0 and 0.3.
func TestFrontOwnsMetadata(t *testing.T) {
	for name, version := range map[string]string{"V1": "1.0", "V03": "0.3"} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, version, true, upstreamOptions{tls: true})
			m := frontMain(t, up)
			peerToken := createFront(t, m, "fronted", up.srv.URL+"/invoke")
			forgeEveryWay(t, m, "fronted", peerToken)
			checkOwnMetadata(t, up, 6)
		})
	}
}

// TestConnectForwardOwnsMetadata: the same through connect --forward,
// which shares the front's forwarding.
func TestConnectForwardOwnsMetadata(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	up := newUpstreamAgent(t, "1.0", true)
	id, agentToken, peerToken := connectAgent(t, m, "laptop")
	startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL)
	forgeEveryWay(t, m, "laptop", peerToken)
	checkOwnMetadata(t, up, 6)
}
