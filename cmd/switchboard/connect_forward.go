package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/netguard"
)

// maxRemembered bounds the task and context ids kept per map.
const maxRemembered = 10000

// checkForwardURL checks the --forward URL. Forward targets are loopback
// or private by design: there is no SSRF guard here, the operator chose
// the target.
func checkForwardURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward must be an http(s) URL, got %q", raw)
	}
	return nil
}

// forwarder relays each task to an A2A server (connect --forward) through
// front.Forwarder, the path the server's front mode takes too, and keeps
// the target's ids of our tasks and contexts in memory.
type forwarder struct {
	fw      *front.Forwarder
	hc      *http.Client
	target  string
	secrets *front.Secrets // --forward-token's value: never published, never relayed to a peer
	log     *slog.Logger

	mu       sync.Mutex
	tasks    map[a2a.TaskID]a2a.TaskID // guarded by mu: our task id → the target's
	contexts map[string]string         // guarded by mu: our context id → the target's
}

func newForwarder(target, token string, timeout time.Duration, log *slog.Logger) *forwarder {
	target = strings.TrimRight(target, "/")
	origin, _ := url.Parse(target) // checked by checkForwardURL
	var rt http.RoundTripper = http.DefaultTransport
	if token != "" {
		rt = &bearerTransport{token: token, origin: origin, base: rt}
	}
	hc := &http.Client{Transport: rt, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if !netguard.SameOrigin(r.URL, origin) {
			return fmt.Errorf("the forward target redirected to %s, another host than --forward's; not following", front.RedactURL(r.URL.String()))
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}}
	secrets := front.NewSecrets(front.Secret{Name: "forward token", Value: token})
	return &forwarder{
		fw: front.NewForwarder(front.Config{Target: target, HTTP: hc, Timeout: timeout, Log: log.With("forward", front.RedactURL(target)), Secrets: secrets}),
		hc: hc, target: target, secrets: secrets, log: log, tasks: make(map[a2a.TaskID]a2a.TaskID), contexts: make(map[string]string),
	}
}

// bearerTransport adds a token to the requests to one origin (the
// --forward URL's, a send target's: scheme, host and port), and to no
// other. As a front.HeaderTransport, it sends the token over gRPC too.
type bearerTransport struct {
	token  string
	origin *url.URL
	base   http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, _ := b.Headers(r.Context(), r.URL)
	if h == nil {
		return b.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", h.Get("Authorization"))
	return b.base.RoundTrip(r)
}

// Unwrap implements front.HeaderTransport.
func (b *bearerTransport) Unwrap() http.RoundTripper { return b.base }

// Headers implements front.HeaderTransport: the token, on its origin only.
func (b *bearerTransport) Headers(_ context.Context, u *url.URL) (http.Header, error) {
	if !netguard.SameOrigin(u, b.origin) {
		return nil, nil
	}
	return http.Header{"Authorization": {"Bearer " + b.token}}, nil
}

var _ front.HeaderTransport = (*bearerTransport)(nil)

// Handle relays one message to the target and its answers back, until the
// target ends the turn. A canceled task is canceled at the target too.
func (f *forwarder) Handle(ctx context.Context, w *connector.Work) {
	f.mu.Lock()
	upTask, upContext := f.tasks[w.TaskID], f.contexts[w.ContextID]
	f.mu.Unlock()
	if !w.NewTask && upTask == "" {
		f.log.Info("a follow-up of a task this connector does not know (did it restart?): sent as a new task", "task_id", w.TaskID)
	}
	_ = f.fw.Handle(ctx, &front.Job{
		TaskID: w.TaskID, ContextID: w.ContextID, NewTask: w.NewTask, From: w.From, Message: w.Message,
		UpstreamTaskID: upTask, UpstreamContextID: upContext,
		Update: w.Update,
		Fail:   func(reason string, _ error) { fail(ctx, w, f.log, reason) },
		Named:  func(theirs a2a.TaskInfo, ended bool) { f.remember(w, theirs, ended) },
		PeerCanceled: func(cause error) bool {
			return errors.Is(cause, connector.ErrTaskCanceled)
		},
	})
}

// remember maps our task and context to the target's, and forgets the
// task once it ended.
func (f *forwarder) remember(w *connector.Work, theirs a2a.TaskInfo, ended bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ended {
		delete(f.tasks, w.TaskID)
		return
	}
	if theirs.TaskID != "" {
		setBounded(f.tasks, w.TaskID, theirs.TaskID)
	}
	if theirs.ContextID != "" {
		setBounded(f.contexts, w.ContextID, theirs.ContextID)
	}
}

// setBounded sets m[k] = v, dropping an arbitrary entry when m is full.
func setBounded[K comparable, V any](m map[K]V, k K, v V) {
	if _, ok := m[k]; !ok && len(m) >= maxRemembered {
		for old := range m {
			delete(m, old)
			break
		}
	}
	m[k] = v
}
