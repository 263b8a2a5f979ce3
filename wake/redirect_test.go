package wake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// redirector is a real loopback server that answers every request with a
// redirect of the given status to target.
func redirector(t *testing.T, status int, target func(r *http.Request) string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target(r), status)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRedirectToAnotherOriginRefused: a receiver that redirects a wake to
// another host (here another port on loopback) does not get the key, the
// signature or the body sent there, whatever the preset's headers.
func TestRedirectToAnotherOriginRefused(t *testing.T) {
	other := newReceiver(t)
	for _, tc := range []struct {
		name   string
		preset switchboard.WakePreset
		upd    wake.Update
	}{
		{"generic X-Api-Key", wake.PresetGeneric, wake.Update{Key: ptr("key-generic-secret"), KeyHeader: ptr("X-Api-Key"), KeyPrefix: ptr(""), HMACSecret: ptr("s")}},
		{"hermes", wake.PresetHermes, wake.Update{HMACSecret: ptr("hermes-secret")}},
		{"bearer", wake.PresetGrokBot, wake.Update{Key: ptr("key-bearer-secret")}},
	} {
		for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(fmt.Sprintf("%s %d", tc.name, status), func(t *testing.T) {
				r := redirector(t, status, func(*http.Request) string { return other.URL + "/stolen" })
				c := config(t, other, tc.preset, tc.upd)
				c.URL = r.URL + "/hook"
				_, err := newSender(loopbackOnly).Wake(context.Background(), sleeper, c, sampleWake())
				if !errors.Is(err, wake.ErrRefused) || !strings.Contains(err.Error(), "another host") {
					t.Fatalf("redirect %d to another origin: %v, want a refusal", status, err)
				}
				if strings.Contains(err.Error(), other.URL) {
					t.Fatalf("the error names the target: %v", err)
				}
			})
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Fatalf("the other origin got %d wakes, first with headers %v", len(got), got[0].Header)
	}
}

// TestRedirectHTTPSToHTTPRefused: a wake sent over https is never carried
// on over plain http, not even to the same host name.
func TestRedirectHTTPSToHTTPRefused(t *testing.T) {
	plain := newReceiver(t)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+strings.TrimPrefix(plain.URL, "http://")+"/hook", http.StatusTemporaryRedirect)
	}))
	defer tls.Close()
	s := newSender(loopbackOnly)
	s.Client.Transport.(*http.Transport).TLSClientConfig = tls.Client().Transport.(*http.Transport).TLSClientConfig
	c := config(t, plain, wake.PresetGeneric, wake.Update{Key: ptr("key-over-tls")})
	c.URL = tls.URL + "/hook"
	if _, err := s.Wake(context.Background(), sleeper, c, sampleWake()); !errors.Is(err, wake.ErrRefused) {
		t.Fatalf("https to http redirect: %v, want a refusal", err)
	}
	if got := plain.requests(); len(got) != 0 {
		t.Fatalf("the plain http receiver got %d wakes (Authorization %q)", len(got), got[0].Header.Get("Authorization"))
	}
}

// TestRedirectThatDropsTheBodyNotFollowed: a 301, 302 or 303 would turn
// the POST into a GET without the wake; its answer is the result, so the
// wake is not recorded as sent.
func TestRedirectThatDropsTheBodyNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		rc := newReceiver(t)
		r := redirector(t, status, func(*http.Request) string { return rc.URL + "/hook" })
		// Same origin too: the redirect goes to the server itself.
		var gets int
		same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				gets++
				w.WriteHeader(http.StatusOK)
				return
			}
			http.Redirect(w, r, "/elsewhere", status)
		}))
		for _, u := range []string{r.URL + "/hook", same.URL + "/hook"} {
			c := config(t, rc, wake.PresetGeneric, wake.Update{Key: ptr("k")})
			c.URL = u
			res, err := newSender(loopbackOnly).Wake(context.Background(), sleeper, c, sampleWake())
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != status {
				t.Errorf("redirect %d: result status %d, want the redirect's", status, res.Status)
			}
		}
		same.Close()
		if n := len(rc.requests()); n != 0 || gets != 0 {
			t.Errorf("redirect %d was followed: %d requests to the target, %d GETs", status, n, gets)
		}
	}
}

// TestRedirectSameOriginFollowed: a 307 or 308 on the same origin keeps the
// method, the body and the key.
func TestRedirectSameOriginFollowed(t *testing.T) {
	rc := newReceiver(t)
	moved := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/hook", http.StatusPermanentRedirect)
			return
		}
		rc.Config.Handler.ServeHTTP(w, r)
	}))
	defer moved.Close()
	c := config(t, rc, wake.PresetGeneric, wake.Update{Key: ptr("k-same")})
	c.URL = moved.URL + "/old"
	res, err := newSender(loopbackOnly).Wake(context.Background(), sleeper, c, sampleWake())
	if err != nil || res.Status != 200 {
		t.Fatalf("same-origin 308: %+v %v", res, err)
	}
	got := rc.requests()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer k-same" {
		t.Fatalf("requests after a same-origin redirect: %+v", got)
	}
	checkPayload(t, decode(t, got[0].Body))
}

// TestRedirectedWakeRecordedAsFailed: through the queue, a wake whose URL
// answers 302 (to a page that would answer a GET with 200) is recorded as
// failed with the 302, not as sent.
func TestRedirectedWakeRecordedAsFailed(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	rc := newReceiver(t)
	r := redirector(t, http.StatusFound, func(*http.Request) string { return rc.URL + "/landing" })
	u := r.URL + "/hook"
	c, err := wake.ApplyUpdate(q.agent.ID, nil, wake.Update{URL: &u, Debounce: ptr(time.Duration(0))}, q.clock.Now(), nil)
	must(t, err)
	must(t, q.db.SaveWakeConfig(context.Background(), c))
	q.send(t, "c1", "", "hello")
	q.sendDue(t)
	ws := q.wakesOf(t)
	if len(ws) != 1 || ws[0].State != switchboard.WakeFailed || ws[0].LastStatus != http.StatusFound || len(rc.requests()) != 0 {
		t.Fatalf("wake after a 302: %+v (the target got %d requests)", ws[0], len(rc.requests()))
	}
}
