package wake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/tracing"
)

// Timeout is the default bound of one wake request.
const Timeout = 15 * time.Second

// Bounds on what is read of and shown from a receiver's answer.
const (
	maxAnswerRead = 64 << 10
	maxAnswerShow = 500
)

var _ Waker = (*Sender)(nil)

// Sender implements switchboard.Waker over HTTP.
type Sender struct {
	// Client makes the requests: a netguard client (see NewClient).
	Client *http.Client
	// AllowHTTP lets wakes go to plain http URLs. Without it only https
	// is used: the key would otherwise cross the network in clear. New
	// sets it where the operator opened the guard.
	AllowHTTP bool
	// UserAgent is sent with every wake (default "switchboard").
	UserAgent string
	// CardURL returns the URL of the agent's card for the payload.
	CardURL func(*switchboard.Agent) string
	// Now returns the current time, for signatures; tests may replace it.
	Now func() time.Time
}

// New returns a Sender whose requests go through NewClient(opts). Plain
// http is allowed only where the operator opened the guard
// (opts.AllowPrivate, or opts.Allow for tests): a deployment on a private
// network.
func New(opts netguard.Options) *Sender {
	return &Sender{Client: NewClient(opts), AllowHTTP: opts.AllowsPlainHTTP()}
}

// NewClient returns the network-guarded client wakes are sent with: the
// guard's options with a 15 s timeout unless they set one. It follows a
// redirect only when it keeps the method and body (307, 308) and stays on
// the same origin (scheme, host and port): a wake carries its key in
// headers of the preset's choosing (X-Api-Key, signature headers), which
// Go's client would otherwise carry to another host, and a 301, 302 or 303
// would turn the POST into a GET without the wake. Such an answer is the
// wake's result (a failure, not a wake sent); a redirect to another origin
// is refused.
func NewClient(opts netguard.Options) *http.Client {
	if opts.Timeout <= 0 {
		opts.Timeout = Timeout
	}
	c := netguard.NewClient(opts)
	netguard.FollowOnlyBodyKeepingRedirects(c, func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != via[0].URL.Scheme || !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			return errCrossOrigin
		}
		return nil
	})
	return c
}

// errCrossOrigin refuses a redirect that leaves the wake URL's origin.
var errCrossOrigin = errors.New("redirect to another origin")

// Wake implements switchboard.Waker: it renders the wake and posts it. A
// body that cannot be rendered and an address the guard refuses are
// errors wrapping switchboard.ErrWakeRefused; errors never name the URL,
// which may hold a secret.
func (s *Sender) Wake(ctx context.Context, agent *switchboard.Agent, cfg *switchboard.WakeConfig, w *switchboard.Wake) (*Result, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	card := ""
	if s.CardURL != nil {
		card = s.CardURL(agent)
	}
	r, err := Render(Input{Agent: agent, Config: cfg, Wake: w, CardURL: card, Now: now()})
	if err != nil {
		return nil, err
	}
	if err := netguard.CheckURL(cfg.URL); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := CheckScheme(cfg, s.AllowHTTP); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrRefused, switchboard.ErrorMessage(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("%w: the wake url is not usable", ErrRefused)
	}
	req.Header = r.Header
	ua := s.UserAgent
	if ua == "" {
		ua = "switchboard"
	}
	req.Header.Set("User-Agent", ua)
	tracing.SetHeader(req.Header, w.TraceParent) // the latest request's, when the deployment traces
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, requestError(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerRead))
	return &Result{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: string(data)}, nil
}

// answerText is a receiver's answer as it is logged, kept and shown: the
// secrets of cfg cut out of the whole of it first (a key cut in two by the
// trim would not be found), then made printable UTF-8 (no NUL or other
// control character but newlines and tabs, which a database or a terminal
// may not take) and trimmed to maxAnswerShow characters.
func answerText(body string, cfg *switchboard.WakeConfig) string {
	body = redactAnswer(strings.ToValidUTF8(body, "?"), cfg)
	out := make([]rune, 0, min(len(body), maxAnswerShow+1))
	for _, r := range body {
		if len(out) == maxAnswerShow {
			return string(append(out, '…'))
		}
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			r = '?'
		}
		out = append(out, r)
	}
	return string(out)
}

// requestError describes a request that got no answer without the URL,
// address or host name that the underlying errors carry. A refusal by the
// network guard wraps switchboard.ErrWakeRefused: retrying cannot cure it.
func requestError(err error) error {
	if errors.Is(err, errCrossOrigin) {
		return fmt.Errorf("%w: the receiver redirected the wake to another host or scheme (wakes follow only 307 and 308 redirects on the same origin, so that the key stays with the receiver)", ErrRefused)
	}
	err = netguard.DescribeError(err)
	if errors.Is(err, netguard.ErrRefused) {
		return fmt.Errorf("%w: %w (see --allow-private-networks)", ErrRefused, err)
	}
	return err
}
