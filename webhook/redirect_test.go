package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/webhook"
)

// hookRequest is one request a redirect test's endpoint received.
type hookRequest struct {
	method    string
	path      string
	body      []byte
	timestamp string
	signature string
	delivery  string
}

// hookEndpoint is a real loopback endpoint for the redirect tests: it
// answers requests to redirectPath with a redirect (code, to the location
// that redirect returns), and every other request as a webhook agent that
// completes the task; it records every request.
type hookEndpoint struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []hookRequest // guarded by mu
}

func newHookEndpoint(t *testing.T, redirectPath string, code int, location func() string) *hookEndpoint {
	t.Helper()
	e := &hookEndpoint{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.reqs = append(e.reqs, hookRequest{
			method: r.Method, path: r.URL.Path, body: body, timestamp: r.Header.Get(webhook.HeaderTimestamp),
			signature: r.Header.Get(webhook.HeaderSignature), delivery: r.Header.Get(webhook.HeaderDelivery),
		})
		e.mu.Unlock()
		if redirectPath != "" && r.URL.Path == redirectPath {
			http.Redirect(w, r, location(), code)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "completed", "result": "answered at " + r.URL.Path})
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// requests returns what the endpoint received so far.
func (e *hookEndpoint) requests() []hookRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]hookRequest(nil), e.reqs...)
}

// loopbackDeliverer returns a Deliverer built the way a caller may build
// one, with a bare netguard client that reaches 127.0.0.1 only: the
// redirect rule must hold without the caller's help.
func loopbackDeliverer() *webhook.Deliverer {
	c := netguard.NewClient(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 5 * time.Second})
	return &webhook.Deliverer{Client: c, UserAgent: "switchboard-test"}
}

const hookSecret = "sbw_redirect-test-secret"

// deliverTo delivers the test offer to endpoint and returns the error.
func deliverTo(t *testing.T, d *webhook.Deliverer, endpoint string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := d.Deliver(ctx, &switchboard.Agent{ID: "g", Endpoint: endpoint, WebhookSecret: hookSecret}, offer())
	return err
}

// wantURLFree fails the test if err names one of the servers.
func wantURLFree(t *testing.T, err error, srvs ...*httptest.Server) {
	t.Helper()
	for _, s := range srvs {
		host := strings.TrimPrefix(s.URL, "http://")
		if strings.Contains(err.Error(), host) || strings.Contains(err.Error(), "secret-path") {
			t.Fatalf("the error %q names the endpoint", err)
		}
	}
}

// TestRedirectNotBodyKeepingIsFailedAttempt: a 301, 302 or 303, even to
// the same origin, is not followed (Go's client would resend the POST as
// a GET without its body): the attempt fails with a clear error that names
// no URL, and nothing but the first request is sent.
func TestRedirectNotBodyKeepingIsFailedAttempt(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			var e *hookEndpoint
			e = newHookEndpoint(t, "/secret-path/a2a/task", code, func() string { return e.srv.URL + "/moved/a2a/task" })
			err := deliverTo(t, loopbackDeliverer(), e.srv.URL+"/secret-path")
			if err == nil {
				t.Fatalf("a %d redirect was taken for an answer", code)
			}
			if !strings.Contains(err.Error(), "307 and 308") {
				t.Fatalf("error %q does not say which redirects are followed", err)
			}
			wantURLFree(t, err, e.srv)
			if got := e.requests(); len(got) != 1 || got[0].method != http.MethodPost {
				t.Fatalf("the endpoint got %d requests (%+v), want the one POST", len(got), got)
			}
		})
	}
}

// TestRedirectSameOriginFollowed: a 307 or 308 on the same origin is
// followed with the same method, body and valid signature.
func TestRedirectSameOriginFollowed(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			var e *hookEndpoint
			e = newHookEndpoint(t, "/old/a2a/task", code, func() string { return e.srv.URL + "/new/a2a/task" })
			if err := deliverTo(t, loopbackDeliverer(), e.srv.URL+"/old"); err != nil {
				t.Fatalf("deliver through a %d on the same origin: %v", code, err)
			}
			got := e.requests()
			if len(got) != 2 || got[1].path != "/new/a2a/task" || got[1].method != http.MethodPost {
				t.Fatalf("requests %+v, want the POST and its repeat at the new path", got)
			}
			first, second := got[0], got[1]
			if string(second.body) != string(first.body) || len(second.body) == 0 {
				t.Fatalf("the body changed on the way: %q then %q", first.body, second.body)
			}
			if second.signature != first.signature || second.delivery != first.delivery ||
				!webhook.Verify(hookSecret, second.timestamp, second.signature, second.body, time.Now(), 5*time.Minute) {
				t.Fatalf("the signature did not follow intact: %+v", second)
			}
		})
	}
}

// TestRedirectOtherOriginRefused: a 307 or 308 to another origin (another
// port, another host name for the same address, another scheme) is not
// followed: nothing reaches the other origin, and the attempt fails with
// an error that names neither.
func TestRedirectOtherOriginRefused(t *testing.T) {
	other := newHookEndpoint(t, "", 0, nil)
	otherPort := other.srv.URL[strings.LastIndex(other.srv.URL, ":")+1:]
	for name, target := range map[string]func(self *httptest.Server) string{
		"AnotherPort": func(*httptest.Server) string { return other.srv.URL + "/stolen/a2a/task" },
		"AnotherName": func(*httptest.Server) string { return "http://localhost:" + otherPort + "/stolen/a2a/task" },
		"SameAddressAnotherName": func(self *httptest.Server) string {
			return "http://localhost:" + self.URL[strings.LastIndex(self.URL, ":")+1:] + "/stolen/a2a/task"
		},
		"AnotherScheme": func(self *httptest.Server) string {
			return "https://" + strings.TrimPrefix(self.URL, "http://") + "/stolen/a2a/task"
		},
	} {
		for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(name+" "+http.StatusText(code), func(t *testing.T) {
				var e *hookEndpoint
				e = newHookEndpoint(t, "/secret-path/a2a/task", code, func() string { return target(e.srv) })
				err := deliverTo(t, loopbackDeliverer(), e.srv.URL+"/secret-path")
				if err == nil || !strings.Contains(err.Error(), "another origin") {
					t.Fatalf("redirect to another origin: %v, want a refusal", err)
				}
				wantURLFree(t, err, e.srv, other.srv)
				if got := e.requests(); len(got) != 1 {
					t.Fatalf("the endpoint got %d requests, want 1", len(got))
				}
			})
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Fatalf("the other origin got %d requests, first signed %q", len(got), got[0].signature)
	}
}

// TestRedirectLoopStops: a same-origin 307 loop ends as a failed attempt.
func TestRedirectLoopStops(t *testing.T) {
	var e *hookEndpoint
	e = newHookEndpoint(t, "/loop/a2a/task", http.StatusTemporaryRedirect, func() string { return e.srv.URL + "/loop/a2a/task" })
	err := deliverTo(t, loopbackDeliverer(), e.srv.URL+"/loop")
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: %v", err)
	}
	wantURLFree(t, err, e.srv)
}
