package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/jobs"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/tracing"
)

// Request headers and content types.
const (
	// HeaderToken carries the configuration's token, as a2a-go v2 sends it.
	HeaderToken = "A2A-Notification-Token"
	// HeaderTokenLegacy carries it too, as A2A 0.3 and a2a-js send it.
	HeaderTokenLegacy = "X-A2A-Notification-Token"
	// ContentTypeV1 is the media type of an A2A 1.0 push body.
	ContentTypeV1 = "application/a2a+json"
	// ContentTypeV03 is the media type of an A2A 0.3 push body.
	ContentTypeV03 = "application/json"
)

// maxAnswer bounds what is read of a receiver's answer (and then thrown
// away: only its status counts).
const maxAnswer = 64 << 10

var _ Pusher = (*Sender)(nil)

// Sender implements Pusher over HTTP.
type Sender struct {
	// Client makes the requests: a netguard client whose redirect policy
	// New sets.
	Client *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// AllowHTTP lets pushes go to plain http URLs. Without it only https is
	// used (a first URL or a redirect to http is refused): the token and
	// credentials would otherwise cross the network in clear.
	AllowHTTP bool
}

// New returns a Sender whose requests go through a netguard client with
// opts. Plain http is allowed only where the operator opened the guard
// (opts.AllowPrivate, or opts.Allow for tests): a deployment on a private
// network. Redirects are followed only when they keep the method and body
// (307, 308), each hop checked by the guard; a hop to another host drops
// the token and the credentials.
func New(opts netguard.Options, userAgent string) *Sender {
	c := netguard.NewClient(opts)
	s := &Sender{Client: c, UserAgent: userAgent, AllowHTTP: opts.AllowsPlainHTTP()}
	netguard.FollowOnlyBodyKeepingRedirects(c, func(req *http.Request, via []*http.Request) error {
		if err := s.checkScheme(req.URL.Scheme); err != nil {
			return err
		}
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del(HeaderToken)
			req.Header.Del(HeaderTokenLegacy)
			req.Header.Del("Authorization")
		}
		return nil
	})
	return s
}

// errPlainHTTP refuses a push to a plain http URL.
var errPlainHTTP = fmt.Errorf("%w: push notification urls must be https (the token would cross the network in clear)", netguard.ErrRefused)

func (s *Sender) checkScheme(scheme string) error {
	if scheme != "https" && !s.AllowHTTP {
		return errPlainHTTP
	}
	return nil
}

// Body returns the body of a push of task for configuration c and its
// content type: for A2A 1.0 a StreamResponse holding the task
// (`{"task": …}`), for 0.3 the bare 0.3 task (with `"kind": "task"`).
func Body(c *switchboard.PushConfig, task *a2a.Task) (contentType string, body []byte, err error) {
	if c.Protocol == switchboard.ProtocolV03 {
		body, err = json.Marshal(a2av0.FromV1Task(task))
		return ContentTypeV03, body, err
	}
	body, err = json.Marshal(a2a.StreamResponse{Event: task})
	return ContentTypeV1, body, err
}

// Push implements Pusher.
func (s *Sender) Push(ctx context.Context, c *switchboard.PushConfig, task *a2a.Task) (Result, error) {
	permanent := Result{Permanent: true}
	ct, body, err := Body(c, task)
	if err != nil {
		return permanent, fmt.Errorf("encode the push: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Config.URL, bytes.NewReader(body))
	if err != nil {
		return permanent, errors.New("the push notification url cannot be requested")
	}
	if err := s.checkScheme(req.URL.Scheme); err != nil {
		return permanent, err
	}
	req.Header.Set("Content-Type", ct)
	tracing.Inject(ctx, req.Header) // the trace context of the change, when the deployment traces
	req.Header.Set("User-Agent", s.UserAgent)
	if c.Protocol != switchboard.ProtocolV03 {
		req.Header.Set("A2A-Version", string(switchboard.ProtocolV1))
	}
	if t := c.Config.Token; t != "" {
		if !headerSafe(t) {
			return permanent, errors.New("the push notification token holds characters a header cannot carry")
		}
		req.Header.Set(HeaderToken, t)
		req.Header.Set(HeaderTokenLegacy, t)
	}
	if a := c.Config.Auth; a != nil && a.Credentials != "" {
		v := a.Scheme + " " + a.Credentials
		if !headerSafe(v) {
			return permanent, errors.New("the push notification authentication holds characters a header cannot carry")
		}
		req.Header.Set("Authorization", v)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return Result{Permanent: errors.Is(err, netguard.ErrRefused)}, netguard.DescribeError(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	res := Result{StatusCode: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code/100 == 2:
		return res, nil
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests, code/100 == 5:
		res.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return res, statusError(code)
	case code/100 == 3:
		res.Permanent = true
		return res, fmt.Errorf("%w (only 307 and 308 redirects are followed)", statusError(code))
	default:
		res.Permanent = true
		return res, statusError(code)
	}
}

// headerSafe reports whether v can be sent as a header value as it is.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// RetryAfter reads a Retry-After header (jobs.ParseRetryAfter) for
// a push: 0 for an absent, malformed or past value, and at most a day.
func RetryAfter(v string, now time.Time) time.Duration {
	d, ok := jobs.ParseRetryAfter(v, now)
	if !ok || d <= 0 {
		return 0
	}
	return min(d, 24*time.Hour)
}

// The errors of an attempt never name the URL, which may hold a secret:
// they are stored as the attempt's error, which the owner reads.

// statusError describes an answer with a status other than 2xx, as "503
// Service Unavailable"; the receiver's own reason phrase is not used.
func statusError(code int) error {
	if text := http.StatusText(code); text != "" {
		return fmt.Errorf("the receiver answered %d %s", code, text)
	}
	return fmt.Errorf("the receiver answered HTTP status %d", code)
}
