package agenthttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// networkEndpoints are the network's endpoints that read a body or a
// query, called with an agent's token ("$AGENT") or the operator's.
var networkEndpoints = []struct {
	method, path string
	asAgent      bool
}{
	{"POST", "/tasks", true},
	{"GET", "/directory", true},
	{"GET", "/directory", false},
	{"PUT", "/communities/lab", false},
	{"POST", "/communities/lab/tokens", false},
	{"GET", "/communities", false},
}

// FuzzNetworkAPI sends arbitrary bodies and query strings to the network's
// endpoints: whatever arrives, the answer is not a server error, a JSON
// answer is JSON, and a refusal says why.
func FuzzNetworkAPI(f *testing.F) {
	for _, seed := range []struct {
		endpoint    int
		query, body string
	}{
		{0, "", `{"community":"lab","skill":"code","task_description":"fix","payload":{"message":"the build"}}`},
		{0, "", `{"to":"worker","payload":{"message":"hi"},"blocking":true,"timeout_seconds":1}`},
		{0, "", `{"to":"http://x.example/a/worker/","task_id":"t","context_id":"c","message_id":"m"}`},
		{0, "", `{"skill":"nobody","payload":{"message":"x"}}`},
		{0, "", `{"payload":{}}`},
		{0, "", `[`},
		{1, "community=lab&skill=code&live=true&limit=2&after=a", ``},
		{2, "limit=0", ``},
		{3, "", `{"closed":true}`},
		{4, "", `{"label":"outsider","rotate":true}`},
		{5, "", ``},
	} {
		f.Add(uint8(seed.endpoint), seed.query, seed.body)
	}
	h := facetest.New(f)
	// Accepted inputs make tasks of the one sender: past its quota every
	// later send would be refused, and the accepted path no longer fuzzed.
	h.Tasks.MaxOpenTasksPerPeer, h.Tasks.MaxPeerBytes = 0, 0
	_, alice := h.Account("alice")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "inbox", "code", "lab")
	_ = worker
	f.Fuzz(func(t *testing.T, endpoint uint8, query, body string) {
		e := networkEndpoints[int(endpoint)%len(networkEndpoints)]
		target := e.path
		if q, err := url.ParseQuery(query); err == nil && len(q) > 0 {
			target += "?" + q.Encode()
		}
		token := h.OperatorToken
		if e.asAgent {
			token = me
		}
		req := httptest.NewRequest(e.method, target, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.API.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %s: status %d: %s", e.method, target, body, rec.Code, rec.Body.Bytes())
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: the answer is not JSON: %q", e.method, target, rec.Body.Bytes())
		}
		if rec.Code >= 400 && rec.Code != http.StatusMethodNotAllowed && !strings.Contains(rec.Body.String(), "error") {
			t.Fatalf("%s %s: status %d without an error: %s", e.method, target, rec.Code, rec.Body.Bytes())
		}
	})
}
