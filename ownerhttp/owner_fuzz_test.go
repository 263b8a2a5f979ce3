package ownerhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// ownerEndpoints are the owner and operator endpoints that read a body or a
// query: "$AGENT" is the fixture agent's id, "$TASK" a task of its made
// for the input, "$OUTBOUND" an outbound record of its, "$ACCOUNT" an
// owner account. The endpoint that reaches
// out (a wake test) and the deletions are left out; wakes are not sent
// (the wake sender does not run).
var ownerEndpoints = []struct{ method, path, readBack string }{
	{"POST", "/agents", ""},
	{"GET", "/agents", ""},
	{"PATCH", "/agents/$AGENT", "/agents/$AGENT"},
	{"POST", "/agents/$AGENT/tokens", "/agents/$AGENT/tokens"},
	{"GET", "/agents/$AGENT/inbox", ""},
	{"GET", "/agents/$AGENT/deliveries", ""},
	{"PUT", "/agents/$AGENT/wake", "/agents/$AGENT/wake"},
	{"GET", "/agents/$AGENT/outbox", ""},
	{"POST", "/agents/$AGENT/outbox", "/agents/$AGENT/outbox"},
	{"GET", "/agents/$AGENT/history/c1", ""},
	{"PATCH", "/outbox/$OUTBOUND", "/outbox/$OUTBOUND"},
	{"POST", "/tasks/$TASK/reply", "/tasks/$TASK"},
	{"GET", "/tasks/$TASK", ""},
	{"POST", "/accounts", ""},
	{"PATCH", "/accounts/$ACCOUNT", "/accounts/$ACCOUNT"},
	{"GET", "/accounts", ""},
}

// FuzzOwnerAPI sends arbitrary bodies and query strings to the owner and
// operator endpoints, as the operator: whatever arrives, the answer is not
// a server error, a JSON answer is JSON, and what a change accepted reads
// back.
func FuzzOwnerAPI(f *testing.F) {
	for _, seed := range []struct {
		endpoint    int
		query, body string
	}{
		{0, "", `{"handle":"fz-new","name":"New","mode":"webhook","endpoint":"https://hook.example/x","skills":[{"id":"s","name":"S","tags":["t"]}],"accepts_tasks":true}`},
		{1, "limit=2&community=x", ``},
		{2, "", `{"name":"Renamed","mode":"inbox","accepts_tasks":false,"description":"d","version":"2"}`},
		{2, "", `{"mode":"connector","skills":null,"extended_skills":[{"id":"x","name":"X"}]}`},
		{3, "", `{"label":"friend"}`},
		{4, "state=submitted&limit=3&cursor=x", ``},
		{5, "state=queued", ``},
		{6, "", `{"url":"https://wake.example/hook","preset":"generic","debounce_seconds":2.5,"max_per_hour":10,"body_template":"{\"t\":\"{{preview}}\",\"ids\":{{taskIdsJson}}}"}`},
		{6, "", `{"preset":"openclaw-agent","url":"https://claw.example/hooks/agent","key":"k","openclaw_agent_id":"main"}`},
		{7, "limit=1", ``},
		{8, "", `{"target":"https://remote.example/a","endpoint":"https://remote.example/a/rpc","protocol":"1.0","context_id":"c1","task_id":"r1","message_id":"m1","text":"hi","push_token":"0123456789abcdef0123"}`},
		{9, "limit=5", ``},
		{10, "", `{"source":"poll","task":{"id":"r1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}]}}`},
		{10, "", `{"source":"send","reply":{"messageId":"x","role":"ROLE_AGENT","parts":[{"data":{"k":1}}]}}`},
		{10, "", `{"source":"send","error":"connection refused"}`},
		{11, "", `{"text":"done","state":"completed","artifact_name":"answer"}`},
		{11, "", `{"state":"input-required","text":"which?","force":true}`},
		{12, "historyLength=1", ``},
		{13, "", `{"name":"someone"}`},
		{14, "", `{"disabled":true,"name":"x"}`},
		{15, "", ``},
		{0, "", `[`},
		{2, "", `null`},
	} {
		f.Add(uint8(seed.endpoint), seed.query, seed.body)
	}
	h := facetest.New(f, facetest.WithWakes(f, false))
	// Each "$TASK" input makes a task of the one peer: past its quota of
	// unfinished tasks (quota_test.go) every later one would be refused.
	h.Tasks.MaxOpenTasksPerPeer, h.Tasks.MaxPeerBytes = 0, 0
	g := h.Agent("fuzz")
	peer := h.PeerToken(g, "fuzzer")
	acct, _ := h.Account("fuzzed")
	o := &switchboard.Outbound{AgentID: g.ID, Target: "https://remote.example/a", Endpoint: "https://remote.example/a/rpc",
		Protocol: switchboard.ProtocolV1, MessageID: "m0", Text: "hi"}
	facetest.Must(f, h.Outbox.Record(context.Background(), o, ""))
	f.Fuzz(func(t *testing.T, endpoint uint8, query, body string) {
		e := ownerEndpoints[int(endpoint)%len(ownerEndpoints)]
		ids := strings.NewReplacer("$AGENT", g.ID, "$ACCOUNT", acct.ID, "$OUTBOUND", o.ID)
		if strings.Contains(e.path, "$TASK") {
			ids = strings.NewReplacer("$AGENT", g.ID, "$ACCOUNT", acct.ID, "$OUTBOUND", o.ID, "$TASK", facetest.NewTaskID(t, h, peer))
		}
		path := ids.Replace(e.path)
		target := path
		if q, err := url.ParseQuery(query); err == nil && len(q) > 0 {
			target += "?" + q.Encode()
		}
		rec := serveOwner(h, e.method, target, body)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %s: status %d: %s", e.method, target, body, rec.Code, rec.Body.Bytes())
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: the answer is not JSON: %q", e.method, target, rec.Body.Bytes())
		}
		if rec.Code >= 400 && rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed && !strings.Contains(rec.Body.String(), "error") {
			t.Fatalf("%s %s: status %d without an error: %s", e.method, target, rec.Code, rec.Body.Bytes())
		}
		if e.readBack != "" && rec.Code < 300 {
			if got := serveOwner(h, "GET", ids.Replace(e.readBack), ""); got.Code != http.StatusOK {
				t.Fatalf("after %s %s %s (%d), GET %s: %d %s", e.method, target, body, rec.Code, e.readBack, got.Code, got.Body.Bytes())
			}
		}
	})
}

// serveOwner runs one request as the operator through the handler, without
// a network.
func serveOwner(h *facetest.Harness, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+h.OperatorToken)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.API.ServeHTTP(rec, req)
	return rec
}
