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
	"github.com/switchboard-dev/switchboard/internal/facetest"
	assembly "github.com/switchboard-dev/switchboard/server"
)

// pingFunc is a store as /readyz checks it.
type pingFunc func(context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }

// wantHealth asks path and checks the status code and the reported state.
func wantHealth(h *facetest.Harness, url string, status int, state string) {
	h.T.Helper()
	r := h.Do("GET", url, nil, "")
	if r.Status != status || r.JSON["status"] != state || r.JSON["ok"] != (status == http.StatusOK) {
		h.T.Fatalf("GET %s: got %d %s, want %d with status %q", url, r.Status, r.Body, status, state)
	}
}

func TestHealthStates(t *testing.T) {
	h := facetest.New(t)
	api := assembly.NewAPI(assembly.APIDeps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Pinger: h.DB}, httpapi.Config{Version: "v-test"})
	srv := httptest.NewServer(api)
	defer srv.Close()

	// Starting: alive, not ready.
	wantHealth(h, srv.URL+"/healthz", http.StatusOK, "starting")
	wantHealth(h, srv.URL+"/readyz", http.StatusServiceUnavailable, "starting")

	api.SetReady(true)
	wantHealth(h, srv.URL+"/healthz", http.StatusOK, "ready")
	wantHealth(h, srv.URL+"/readyz", http.StatusOK, "ready")
	if r := h.Do("GET", srv.URL+"/readyz", nil, ""); r.JSON["version"] != "v-test" {
		t.Fatalf("readyz does not name the version: %s", r.Body)
	}

	// Draining (shutdown): still alive, no longer ready, and it stays so.
	api.SetReady(false)
	api.SetReady(false)
	wantHealth(h, srv.URL+"/healthz", http.StatusOK, "draining")
	r := h.Do("GET", srv.URL+"/readyz", nil, "")
	if r.Status != http.StatusServiceUnavailable || r.JSON["status"] != "draining" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("draining readyz: %d %v %s", r.Status, r.Header, r.Body)
	}
}

func TestReadyStoreUnreachable(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.StoreCheckInterval = time.Nanosecond }))
	wantHealth(h, h.Server.URL+"/readyz", http.StatusOK, "ready")
	_ = h.DB.Close()
	wantHealth(h, h.Server.URL+"/readyz", http.StatusServiceUnavailable, "store unreachable")
	wantHealth(h, h.Server.URL+"/healthz", http.StatusOK, "ready")
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
	h := facetest.New(t, facetest.WithDeps(func(d *assembly.APIDeps) { d.Pinger = ping }),
		facetest.WithConfig(func(c *httpapi.Config) { c.StoreCheckInterval = time.Hour }))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, err := http.Get(h.Server.URL + "/readyz")
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
	wantHealth(h, h.Server.URL+"/readyz", http.StatusOK, "ready") // within the interval: the outcome is reused
	if got, want := pings.Load(), int32(1); got != want {
		t.Fatalf("pings: got %d, want %d", got, want)
	}
}
