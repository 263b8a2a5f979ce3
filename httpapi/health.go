package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// What /readyz reports, in the order a server goes through them.
const (
	stateStarting int32 = iota // from New until the first SetReady(true)
	stateReady
	stateDraining // SetReady(false) after being ready: shutting down
)

// DefaultStoreCheckInterval is how long /readyz reuses the result of a
// store check, so that however often load balancers ask, the store sees
// at most one check per interval.
const DefaultStoreCheckInterval = time.Second

// storeCheckTimeout bounds one store check; a store that takes longer
// counts as unreachable.
const storeCheckTimeout = 2 * time.Second

// SetReady sets what /readyz answers: 200 once ready (while the store
// answers), 503 before ("starting") and again after ready is set back to
// false ("draining", the server is shutting down). /healthz answers 200
// in every state.
func (s *Server) SetReady(ready bool) {
	if ready {
		s.state.Store(stateReady)
		return
	}
	s.state.CompareAndSwap(stateReady, stateDraining)
}

func (s *Server) stateName() string {
	switch s.state.Load() {
	case stateReady:
		return "ready"
	case stateDraining:
		return "draining"
	}
	return "starting"
}

// handleHealth answers liveness: 200 whenever the process answers HTTP at
// all, whatever its readiness, so that a supervisor restarts only a process
// that is stuck, not one that is starting or draining.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "status": s.stateName(), "version": s.Cfg.Version})
}

// noTLS is the certificates' state of a server that serves no HTTPS:
// none.
func noTLS() map[string]ownerapi.TLSName { return nil }

// handleReady answers readiness: 200 when the server is ready and the
// store answers, 503 with the reason otherwise (starting, draining, store
// unreachable, storage full), so that load balancers send work only where
// it can be done. A full store is not a reason to restart: liveness
// (/healthz) stays 200. With HTTPS, the body says how each name's
// certificate stands (tls); a name without one leaves the status as it
// is: restarting the server would not get it one sooner, and would run
// into the CA's rate limits.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	tls := s.tlsStatus()
	status, cause := s.stateName(), ""
	if status == "ready" {
		if err := s.storeCheck.check(r.Context()); errors.Is(err, switchboard.ErrStorageFull) {
			s.errLogs.Error("not ready: the store cannot write", "err", err)
			status, cause = "storage full", "writes fail for want of space on the store's device: free space, and the server takes work again"
		} else if err != nil {
			s.errLogs.Error("not ready: the store does not answer", "err", err)
			status = "store unreachable"
		}
	}
	if status != "ready" {
		w.Header().Set("Retry-After", "1")
		WriteJSON(w, http.StatusServiceUnavailable, ownerapi.Ready{Status: status, Cause: cause, TLS: tls})
		return
	}
	WriteJSON(w, http.StatusOK, ownerapi.Ready{OK: true, Status: status, Version: s.Cfg.Version, TLS: tls})
}

// storeCheck checks the store at most once per interval and remembers the
// outcome.
type storeCheck struct {
	ping     func(context.Context) error // immutable; nil: there is nothing to check
	interval time.Duration               // immutable

	// mu is held during a ping: concurrent checks wait for that one ping
	// (at most storeCheckTimeout) and share its outcome.
	mu  sync.Mutex
	at  time.Time // guarded by mu: when err was found; zero before the first check
	err error     // guarded by mu
}

// check returns the outcome of the last ping, pinging first if it is older
// than the interval. The ping outlives a caller that goes away.
func (c *storeCheck) check(ctx context.Context) error {
	if c.ping == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < c.interval {
		return c.err
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCheckTimeout)
	defer cancel()
	c.err, c.at = c.ping(pctx), time.Now()
	return c.err
}
