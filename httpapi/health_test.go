package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
	assembly "github.com/switchboard-dev/switchboard/server"
)

// pingFunc is a store as /readyz checks it.
type pingFunc func(context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }

// wantHealth asks path and checks the status code and the reported state.
func (h *harness) wantHealth(url string, status int, state string) {
	h.t.Helper()
	r := h.do("GET", url, nil, "")
	if r.status != status || r.json["status"] != state || r.json["ok"] != (status == http.StatusOK) {
		h.t.Fatalf("GET %s: got %d %s, want %d with status %q", url, r.status, r.body, status, state)
	}
}

func TestHealthStates(t *testing.T) {
	h := newHarness(t)
	api := assembly.NewAPI(assembly.APIDeps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Pinger: h.db}, httpapi.Config{Version: "v-test"})
	srv := httptest.NewServer(api)
	defer srv.Close()

	// Starting: alive, not ready.
	h.wantHealth(srv.URL+"/healthz", http.StatusOK, "starting")
	h.wantHealth(srv.URL+"/readyz", http.StatusServiceUnavailable, "starting")

	api.SetReady(true)
	h.wantHealth(srv.URL+"/healthz", http.StatusOK, "ready")
	h.wantHealth(srv.URL+"/readyz", http.StatusOK, "ready")
	if r := h.do("GET", srv.URL+"/readyz", nil, ""); r.json["version"] != "v-test" {
		t.Fatalf("readyz does not name the version: %s", r.body)
	}

	// Draining (shutdown): still alive, no longer ready, and it stays so.
	api.SetReady(false)
	api.SetReady(false)
	h.wantHealth(srv.URL+"/healthz", http.StatusOK, "draining")
	r := h.do("GET", srv.URL+"/readyz", nil, "")
	if r.status != http.StatusServiceUnavailable || r.json["status"] != "draining" || r.header.Get("Retry-After") == "" {
		t.Fatalf("draining readyz: %d %v %s", r.status, r.header, r.body)
	}
}

func TestReadyStoreUnreachable(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.StoreCheckInterval = time.Nanosecond }))
	h.wantHealth(h.srv.URL+"/readyz", http.StatusOK, "ready")
	_ = h.db.Close()
	h.wantHealth(h.srv.URL+"/readyz", http.StatusServiceUnavailable, "store unreachable")
	h.wantHealth(h.srv.URL+"/healthz", http.StatusOK, "ready")
}

// TestReadyStoreCheckShared: however many checks come at once or within
// the interval, the store is pinged once, and its outcome is reused.
func TestReadyStoreCheckShared(t *testing.T) {
	var pings atomic.Int32
	var failing atomic.Bool
	ping := pingFunc(func(context.Context) error {
		pings.Add(1)
		time.Sleep(10 * time.Millisecond) // a slow store: concurrent checks wait for this ping
		if failing.Load() {
			return errors.New("store down")
		}
		return nil
	})
	h := newHarness(t, withDeps(func(d *assembly.APIDeps) { d.Pinger = ping }),
		withConfig(func(c *httpapi.Config) { c.StoreCheckInterval = time.Hour }))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, err := http.Get(h.srv.URL + "/readyz")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("readyz: %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	failing.Store(true)
	h.wantHealth(h.srv.URL+"/readyz", http.StatusOK, "ready") // within the interval: the outcome is reused
	if got, want := pings.Load(), int32(1); got != want {
		t.Fatalf("pings: got %d, want %d", got, want)
	}
}
