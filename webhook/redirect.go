package webhook

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboard-dev/switchboard/netguard"
)

// maxRedirects bounds the redirects one delivery follows.
const maxRedirects = 5

// The redirect rule. A delivery follows a redirect only when it keeps the
// method and the body (307, 308) and stays on the endpoint's origin
// (scheme, host and port; see netguard.SameOrigin). Go's client would
// otherwise resend the signed POST as a bodiless GET after a 301, 302 or
// 303, and carry the body and the signature headers to whatever host a
// redirect names. Anything else is a failed attempt, retried like any
// other: the 301, 302 or 303 is the answer (see statusError), a redirect to
// another origin is refused before a request is made there.

// errCrossOrigin refuses a redirect that leaves the endpoint's origin. It
// names no URL: it becomes the delivery's last error.
var errCrossOrigin = errors.New("the endpoint redirected the delivery to another origin; webhook deliveries follow only 307 and 308 redirects to the same scheme, host and port, so that the signed body stays with the endpoint")

// errTooManyRedirects ends a chain of redirects on the same origin.
var errTooManyRedirects = fmt.Errorf("the endpoint redirected the delivery %d times in a row", maxRedirects)

// client returns d.Client with the redirect rule installed on top of its
// own redirect policy (the network guard's, for a netguard client). The
// client is a copy that shares d.Client's transport and connections, so
// the rule holds however the caller built the client.
func (d *Deliverer) client() *http.Client {
	c := *d.Client
	netguard.FollowOnlyBodyKeepingRedirects(&c, func(req *http.Request, via []*http.Request) error {
		if !netguard.SameOrigin(req.URL, via[0].URL) {
			return errCrossOrigin
		}
		if len(via) >= maxRedirects {
			return errTooManyRedirects
		}
		return nil
	})
	return &c
}

// requestError describes a request that got no answer without the URL or
// host name the underlying errors carry.
func requestError(err error) error {
	switch {
	case errors.Is(err, errCrossOrigin):
		return errCrossOrigin
	case errors.Is(err, errTooManyRedirects):
		return errTooManyRedirects
	}
	return netguard.DescribeError(err)
}
