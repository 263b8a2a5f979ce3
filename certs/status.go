package certs

import (
	"context"
	"crypto/x509"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// status is what the manager knows of each name's certificate beyond the
// certificate itself: whether it is being asked for, and the last failure.
type status struct {
	mu     sync.Mutex
	byName map[string]*nameState // guarded by mu
}

// nameState is one name's.
type nameState struct {
	source   string   // "acme" or "on_demand"
	failure  *failure // the last failure since the last success
	failedAt time.Time
}

func newStatus(domains []string) *status {
	s := &status{byName: make(map[string]*nameState)}
	for _, d := range domains {
		s.byName[d] = &nameState{source: "acme"}
	}
	return s
}

// stateLocked returns name's state, tracking it from now on (an agent's
// domain, source on_demand).
func (s *status) stateLocked(name string) *nameState {
	st := s.byName[name]
	if st == nil {
		st = &nameState{source: "on_demand"}
		s.byName[name] = st
	}
	return st
}

// track starts tracking name.
func (s *status) track(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateLocked(name)
}

// failed records a failure for name.
func (s *status) failed(name string, f failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stateLocked(name)
	st.failure, st.failedAt = &f, time.Now().UTC()
}

// succeeded forgets name's last failure.
func (s *status) succeeded(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stateLocked(name).failure = nil
}

// names returns the names tracked.
func (s *status) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byName))
}

// snapshot returns every name's state, leaf giving the certificate served
// for a name (nil: none).
func (s *status) snapshot(leaf func(string) *x509.Certificate) map[string]ownerapi.TLSName {
	s.mu.Lock()
	states := make(map[string]nameState, len(s.byName))
	for n, st := range s.byName {
		states[n] = *st
	}
	s.mu.Unlock()
	out := make(map[string]ownerapi.TLSName, len(states))
	now := time.Now()
	for name, st := range states {
		t := ownerapi.TLSName{State: ownerapi.TLSObtaining, Source: st.source}
		if c := leaf(name); c != nil && now.Before(c.NotAfter) {
			exp := c.NotAfter.UTC()
			t.State, t.Expires = ownerapi.TLSOK, &exp
		} else if st.failure != nil {
			t.State = ownerapi.TLSFailed
		}
		if f := st.failure; f != nil {
			failedAt := st.failedAt
			t.Reason, t.Cause, t.Fix, t.Failed = f.reason, f.cause, f.fix, &failedAt
		}
		out[name] = t
	}
	return out
}

// expiries returns the seconds until the certificate of each name expires
// (negative once it has), for the names with one.
func expiries(names []string, leaf func(string) *x509.Certificate) []metrics.Sample {
	var out []metrics.Sample
	now := time.Now()
	for _, n := range names {
		if c := leaf(n); c != nil {
			out = append(out, metrics.Sample{Label: n, Value: c.NotAfter.Sub(now).Seconds()})
		}
	}
	return out
}

// onEvent is certmagic's event hook: it keeps each name's state and logs
// what an operator must know (a certificate obtained, a failure with its
// cause and fix) in the server's log. It never cancels what certmagic is
// about to do.
func (m *Manager) onEvent(ctx context.Context, event string, data map[string]any) error {
	switch event {
	case "cert_obtaining":
		name := identifier(data)
		m.status.track(name)
		m.logger.Info("obtaining a certificate", "name", name, "ca", m.cfg.CA)
	case "cert_obtained":
		name := identifier(data)
		m.status.succeeded(name)
		m.logger.Info("certificate obtained", "name", name, "renewal", data["renewal"] == true)
	case "cert_failed":
		name := identifier(data)
		err, _ := data["error"].(error)
		if err == nil {
			err = fmt.Errorf("%v", data["error"])
		}
		f := classify(err, name, m.cfg.CA, m.dnsNote(ctx, name))
		m.status.failed(name, f)
		m.logger.Error("could not obtain a certificate", "name", name, "renewal", data["renewal"] == true,
			"reason", f.reason, "cause", f.cause, "fix", f.fix, "err", err)
	case "cached_managed_cert":
		if sans, ok := data["sans"].([]string); ok {
			for _, n := range sans {
				m.status.track(normalize(n))
			}
		}
	}
	return nil
}

// identifier is the name an event is about.
func identifier(data map[string]any) string {
	s, _ := data["identifier"].(string)
	return normalize(s)
}

// dnsNote says what name resolves to here, for a failure's cause: the
// address the CA tried is most often the wrong one.
func (m *Manager) dnsNote(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	addrs, err := m.decider.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil || len(addrs) == 0 {
		return " (it does not resolve here)"
	}
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.Unmap().String()
	}
	return " (it resolves to " + strings.Join(s, ", ") + ")"
}

// unmapAll unmaps IPv4-mapped IPv6 addresses.
func unmapAll(addrs []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out
}
