package push_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/tracing"
)

// loopback lets a sender reach receivers on 127.0.0.1 only.
var loopback = netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 5 * time.Second}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTP server on loopback that records what it gets and
// answers status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status int
	header http.Header
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status, header: http.Header{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: b})
		status := r.status
		for k, v := range r.header {
			w.Header()[k] = v
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func workingTask() *a2a.Task {
	now := time.Now().UTC()
	return &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now},
		History:   []*a2a.Message{{ID: "m1", Role: a2a.MessageRoleUser, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}},
		Artifacts: []*a2a.Artifact{{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("part")}}}}
}

func config(url string, proto switchboard.ProtocolVersion) *switchboard.PushConfig {
	return &switchboard.PushConfig{Protocol: proto, Config: a2a.PushConfig{TaskID: "t1", ID: "p1", URL: url, Token: "the-token",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred-123"}}}
}

func TestPushV1Shape(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	s := push.New(loopback, "switchboard/test")
	res, err := s.Push(context.Background(), config(rc.URL+"/hook", switchboard.ProtocolV1), workingTask())
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("push: %+v %v", res, err)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	h := got[0].header
	for k, want := range map[string]string{
		"Content-Type": "application/a2a+json", "A2A-Version": "1.0", "A2A-Notification-Token": "the-token",
		"X-A2A-Notification-Token": "the-token", "Authorization": "Bearer cred-123", "User-Agent": "switchboard/test",
	} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(got[0].body, &sr); err != nil {
		t.Fatalf("body %s: %v", got[0].body, err)
	}
	task, ok := sr.Event.(*a2a.Task)
	if !ok || task.ID != "t1" || task.Status.State != a2a.TaskStateWorking || len(task.Artifacts) != 1 {
		t.Fatalf("body %s", got[0].body)
	}
	if !strings.HasPrefix(string(got[0].body), `{"task":`) {
		t.Fatalf("body is not a StreamResponse holding the task: %s", got[0].body)
	}
}

func TestPushV03Shape(t *testing.T) {
	rc := newReceiver(t, http.StatusNoContent)
	s := push.New(loopback, "switchboard/test")
	if _, err := s.Push(context.Background(), config(rc.URL, switchboard.ProtocolV03), workingTask()); err != nil {
		t.Fatal(err)
	}
	got := rc.requests()[0]
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	if got.header.Get("A2A-Version") != "" || got.header.Get("X-A2A-Notification-Token") != "the-token" {
		t.Fatalf("headers %v", got.header)
	}
	var raw map[string]any
	if err := json.Unmarshal(got.body, &raw); err != nil || raw["kind"] != "task" {
		t.Fatalf("0.3 body %s", got.body)
	}
	var task legacy.Task
	if err := json.Unmarshal(got.body, &task); err != nil || task.ID != "t1" || task.Status.State != legacy.TaskStateWorking {
		t.Fatalf("0.3 task %s: %v", got.body, err)
	}
}

func TestPushAnswers(t *testing.T) {
	for _, tc := range []struct {
		status     int
		retryAfter string
		ok         bool
		permanent  bool
		wait       time.Duration
	}{
		{status: 200, ok: true}, {status: 202, ok: true},
		{status: 500}, {status: 502}, {status: 503, retryAfter: "7", wait: 7 * time.Second},
		{status: 429, retryAfter: "120", wait: 2 * time.Minute}, {status: 408},
		{status: 400, permanent: true}, {status: 401, permanent: true}, {status: 404, permanent: true}, {status: 410, permanent: true},
	} {
		rc := newReceiver(t, tc.status)
		if tc.retryAfter != "" {
			rc.header.Set("Retry-After", tc.retryAfter)
		}
		res, err := push.New(loopback, "sb").Push(context.Background(), config(rc.URL, switchboard.ProtocolV1), workingTask())
		if (err == nil) != tc.ok || res.Permanent != tc.permanent || res.RetryAfter != tc.wait || res.StatusCode != tc.status {
			t.Errorf("status %d: %+v, %v", tc.status, res, err)
		}
		if err != nil && strings.Contains(err.Error(), rc.URL) {
			t.Errorf("the error names the URL: %v", err)
		}
	}
}

func TestPushConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res, err := push.New(loopback, "sb").Push(context.Background(), config("http://"+addr+"/x?key=secret", switchboard.ProtocolV1), workingTask())
	if err == nil || res.Permanent || !strings.Contains(err.Error(), "could not connect") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("connection refused: %+v %v", res, err)
	}
}

// TestPushRefusedByDefault checks the network guard: with default options
// a loopback literal, a name that resolves to loopback, and a redirect to a
// private address are all refused, permanently, and nothing arrives.
func TestPushRefusedByDefault(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
	s := push.New(netguard.Options{}, "sb")
	// https, so that the refusal is the dial-time check of the address.
	for _, target := range []string{"https://127.0.0.1:" + port, "https://localhost:" + port + "/", "https://[::ffff:127.0.0.1]:" + port} {
		res, err := s.Push(context.Background(), config(target, switchboard.ProtocolV1), workingTask())
		if err == nil || !res.Permanent || !strings.Contains(err.Error(), "private or special-purpose address") {
			t.Errorf("%s: %+v %v", target, res, err)
		}
	}
	// A redirect from an allowed receiver to a private one.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:"+port+"/", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	res, err := push.New(loopback, "sb").Push(context.Background(), config(redirector.URL, switchboard.ProtocolV1), workingTask())
	if err == nil || !res.Permanent || !strings.Contains(err.Error(), "network guard") {
		t.Errorf("redirect to a private address: %+v %v", res, err)
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("%d refused pushes arrived", n)
	}
}

// TestPushRedirects follows a 307 to another host without the token and
// credentials, and does not follow a 302 (which would turn the POST into a
// GET).
func TestPushRedirects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("no 127.0.0.2 on this machine:", err)
	}
	target := &receiver{status: 200, header: http.Header{}}
	target.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		target.mu.Lock()
		target.got = append(target.got, received{header: req.Header.Clone(), body: b})
		target.mu.Unlock()
	}))
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	defer target.Close()
	code := http.StatusTemporaryRedirect
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/moved", code)
	}))
	defer redirector.Close()
	s := push.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "sb")
	if _, err := s.Push(context.Background(), config(redirector.URL, switchboard.ProtocolV1), workingTask()); err != nil {
		t.Fatal(err)
	}
	got := target.requests()
	if len(got) != 1 || len(got[0].body) == 0 {
		t.Fatalf("307: %d requests", len(got))
	}
	for _, h := range []string{"A2A-Notification-Token", "X-A2A-Notification-Token", "Authorization"} {
		if got[0].header.Get(h) != "" {
			t.Errorf("%s reached another host", h)
		}
	}
	code = http.StatusFound
	res, err := s.Push(context.Background(), config(redirector.URL, switchboard.ProtocolV1), workingTask())
	if err == nil || !res.Permanent || res.StatusCode != http.StatusFound || len(target.requests()) != 1 {
		t.Fatalf("302: %+v %v", res, err)
	}
}

func TestPushBadHeaderValues(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	c := config(rc.URL, switchboard.ProtocolV1)
	c.Config.Token = "a\r\nX-Evil: 1"
	res, err := push.New(loopback, "sb").Push(context.Background(), c, workingTask())
	if err == nil || !res.Permanent || len(rc.requests()) != 0 {
		t.Fatalf("a token with a newline: %+v %v", res, err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "0": 0, "-5": 0, "30": 30 * time.Second, " 30 ": 30 * time.Second, "soon": 0,
		"99999999999999999999": 0, "9999999": 24 * time.Hour,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := push.RetryAfter(v, now); got != want {
			t.Errorf("RetryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "120", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "1e9", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, v string) {
		if d := push.RetryAfter(v, now); d < 0 || d > 24*time.Hour {
			t.Fatalf("RetryAfter(%q) = %s", v, d)
		}
	})
}

// TestPushPlainHTTPRefused refuses http URLs, first or redirected to,
// unless the operator opened the guard: the token would travel in clear.
func TestPushPlainHTTPRefused(t *testing.T) {
	res, err := push.New(netguard.Options{}, "sb").Push(context.Background(), config("http://example.com/hook", switchboard.ProtocolV1), workingTask())
	if err == nil || !res.Permanent || !strings.Contains(err.Error(), "must be https") {
		t.Fatalf("http: %+v %v", res, err)
	}
	plain := newReceiver(t, http.StatusOK)
	tlsRedirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/hook", http.StatusTemporaryRedirect)
	}))
	defer tlsRedirector.Close()
	s := push.New(loopback, "sb")
	s.AllowHTTP = false
	s.Client.Transport.(*http.Transport).TLSClientConfig = tlsRedirector.Client().Transport.(*http.Transport).TLSClientConfig
	res, err = s.Push(context.Background(), config(tlsRedirector.URL, switchboard.ProtocolV1), workingTask())
	if err == nil || !res.Permanent || !strings.Contains(err.Error(), "must be https") || len(plain.requests()) != 0 {
		t.Fatalf("redirect to http: %+v %v", res, err)
	}
}

// TestPushTimeoutAndLargeAnswer: a receiver that does not answer in time
// fails the attempt (to be retried); a large answer is not read whole.
func TestPushTimeoutAndLargeAnswer(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := push.New(loopback, "sb").Push(ctx, config(slow.URL, switchboard.ProtocolV1), workingTask())
	if err == nil || res.Permanent || err.Error() != "no answer in time" {
		t.Fatalf("slow receiver: %+v %v", res, err)
	}

	whole := make(chan bool, 1) // whether the receiver could write its whole answer
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := strings.Repeat("x", 64<<10)
		for range 1024 { // 64 MiB: more than any socket buffer holds
			if _, err := io.WriteString(w, chunk); err != nil {
				whole <- false
				return
			}
		}
		whole <- true
	}))
	defer big.Close()
	if _, err := push.New(loopback, "sb").Push(context.Background(), config(big.URL, switchboard.ProtocolV1), workingTask()); err != nil {
		t.Fatal(err)
	}
	select {
	case all := <-whole:
		if all {
			t.Fatal("the sender read a 64 MiB answer whole")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver is still writing: the sender did not stop reading")
	}
}

// TestPushBadAuthenticationValue: authentication credentials a header
// cannot carry make the push fail for good, before any request.
func TestPushBadAuthenticationValue(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	c := config(rc.URL, switchboard.ProtocolV1)
	c.Config.Auth = &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "a\r\nX-Evil: 1"}
	res, err := push.New(loopback, "sb").Push(context.Background(), c, workingTask())
	if err == nil || !res.Permanent || len(rc.requests()) != 0 {
		t.Fatalf("credentials with a newline: %+v %v", res, err)
	}
}

// TestPushTraceparent: a push sent under a stored trace context carries
// it in the traceparent header; one without has no such header.
func TestPushTraceparent(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	s := push.New(loopback, "switchboard/test")
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, ctx := range []context.Context{tracing.WithTraceparent(context.Background(), tp), context.Background()} {
		if _, err := s.Push(ctx, config(rc.URL, switchboard.ProtocolV1), workingTask()); err != nil {
			t.Fatal(err)
		}
	}
	got := rc.requests()
	if len(got) != 2 || got[0].header.Get("Traceparent") != tp || got[1].header.Get("Traceparent") != "" {
		t.Fatalf("traceparent headers %q, %q; want %q, none", got[0].header.Get("Traceparent"), got[1].header.Get("Traceparent"), tp)
	}
}
