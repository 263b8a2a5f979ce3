package front

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// observation is what the upstream's last answer to a job looked like,
// recorded by the client's transport for Classify.
type observation struct {
	mu       sync.Mutex
	status   int    // the last answer's HTTP status; 0: none came
	jsonRPC  bool   // it was JSON (or an event stream)
	access   bool   // it bore an access service's marks
	location string // where a redirect pointed
	bearer   bool   // a bearer token was sent
}

type observationKey struct{}

// withObservation returns ctx in which the client records the upstream's
// answers to o.
func withObservation(ctx context.Context, o *observation) context.Context {
	return context.WithValue(ctx, observationKey{}, o)
}

// observe records resp, the answer to r, in r's observation, if any.
func observe(r *http.Request, resp *http.Response, bearer bool) {
	o, _ := r.Context().Value(observationKey{}).(*observation)
	if o == nil || resp == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.status, o.bearer = resp.StatusCode, bearer
	ct := resp.Header.Get("Content-Type")
	o.jsonRPC = strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/event-stream")
	o.location = resp.Header.Get("Location")
	o.access = false
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "cf-access-") {
			o.access = true
		}
	}
	if strings.Contains(o.location, "cloudflareaccess.com") || strings.Contains(o.location, "/cdn-cgi/access/") {
		o.access = true
	}
}

// Classify names the cause of a failed call to the upstream, from the
// error and what the transport saw of the answer. creds are the
// credentials the front holds.
func classify(err error, o *observation, creds switchboard.FrontCredentials) (reason string, status int) {
	o.mu.Lock()
	status, jsonRPC, access, bearer := o.status, o.jsonRPC, o.access, o.bearer
	o.mu.Unlock()
	switch {
	case errors.Is(err, ErrTooLarge):
		return switchboard.FrontTooLarge, status
	case errors.Is(err, netguard.ErrRefused):
		return switchboard.FrontMisconfigured, status
	case status == 0 && err != nil && strings.Contains(err.Error(), netguard.ErrRefused.Error()):
		// A gRPC connection's failure to dial comes back as text.
		return switchboard.FrontMisconfigured, status
	case status == 0 && (errors.Is(err, a2a.ErrUnauthenticated) || errors.Is(err, a2a.ErrUnauthorized)):
		// A gRPC upstream's refusal: no HTTP status was seen.
		if creds.Bearer == "" {
			return switchboard.FrontAuthMissing, status
		}
		return switchboard.FrontAuthRejected, status
	case access && (status == 0 || status/100 == 3 || status == 401 || status == 403):
		if len(creds.Headers) == 0 {
			return switchboard.FrontAccessMissing, status
		}
		return switchboard.FrontAccessRejected, status
	case errors.Is(err, ErrRedirected) || status/100 == 3:
		return switchboard.FrontRedirected, status
	case status == 401 || status == 403:
		if !bearer {
			return switchboard.FrontAuthMissing, status
		}
		return switchboard.FrontAuthRejected, status
	case status == 530:
		return switchboard.FrontTunnelDown, status
	case status >= 500 && !jsonRPC:
		return switchboard.FrontUnavailable, status
	case status == 0:
		return switchboard.FrontNetwork, status
	}
	return switchboard.FrontUnexpected, status
}

// peerMessage is what peers are told of an upstream failure of reason:
// generic text, never the upstream's own.
func peerMessage(reason string) string {
	switch reason {
	case switchboard.FrontMisconfigured, switchboard.FrontAuthMissing, switchboard.FrontAuthRejected,
		switchboard.FrontAccessMissing, switchboard.FrontAccessRejected, switchboard.FrontRedirected,
		switchboard.FrontUnsupportedInterface:
		return "This agent is unavailable: its front is misconfigured; tell its operator"
	case switchboard.FrontUnexpected, switchboard.FrontTooLarge:
		return "This agent gave an invalid answer; try again later or tell its operator"
	}
	return "This agent is not reachable right now; try again later"
}
