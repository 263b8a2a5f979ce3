package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// keepAlive is the longest a quiet stream waits before it sends something
// (the list if it changed, else a comment), so that proxies keep it open.
const keepAlive = 15 * time.Second

// writeTimeout bounds each write of a stream: a page that stops reading
// ends its stream, rather than hold its goroutine in a write for ever.
const writeTimeout = 30 * time.Second

// handleEvents streams the agents list to an open page (server-sent
// events): an "agents" event with the list's HTML, rendered by the same
// template as the page, after each hint of the viewer's accounts
// (switchboard.AccountAgentsSubject; at most one per Config.Coalesce) and
// every Config.Poll, when it changed; a "signedout" event, and the end,
// when the sign-in ends. The stream holds no ticker but one.
func (c *Console) handleEvents(w http.ResponseWriter, r *http.Request, v *viewer) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		c.renderError(w, r, http.StatusInternalServerError, "Streaming is not supported here.")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(c.streams, cancel)
	defer stop()
	if c.streams.Err() != nil {
		c.renderError(w, r, http.StatusServiceUnavailable, "The server is shutting down.")
		return
	}
	hint := make(chan struct{}, 1)
	watches, err := c.watchAccounts(ctx, v, hint)
	defer func() {
		for _, w := range watches {
			w.Close()
		}
	}()
	accounts := make(chan struct{}, 1) // the operator's: an account was created
	if err == nil {
		var w switchboard.Watch
		if w, err = c.watchNewAccounts(ctx, v, accounts); w != nil {
			watches = append(watches, w)
		}
	}
	if err != nil {
		c.Logger.Error("watch the console's accounts", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()

	poll := time.NewTicker(min(c.cfg.Poll, keepAlive))
	defer poll.Stop()
	var last [sha256.Size]byte // the list last sent: an unchanged list is not sent again
	for {
		select {
		case <-ctx.Done():
			return
		case <-hint:
			// More hints within the coalescing time make one update.
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.cfg.Coalesce):
			}
		case <-poll.C:
		case <-accounts:
			// Watch the new account's agents too: watch every account
			// again, then close the old watches.
			more, err := c.watchAccounts(ctx, v, hint)
			if err != nil {
				for _, w := range more {
					w.Close()
				}
				c.Logger.Warn("watch a new account's agents", "err", err)
				break
			}
			for _, w := range watches {
				w.Close()
			}
			watches = more
			if w, err := c.watchNewAccounts(ctx, v, accounts); err == nil && w != nil {
				watches = append(watches, w)
			}
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if !c.sendAgents(ctx, w, r, &last) || rc.Flush() != nil {
			return
		}
	}
}

// sendAgents writes one "agents" event, a keep-alive comment when the list
// is the one last sent, or "signedout" when the sign-in ended; it reports
// whether the stream goes on.
func (c *Console) sendAgents(ctx context.Context, w http.ResponseWriter, r *http.Request, last *[sha256.Size]byte) bool {
	v, err := c.viewerOf(r)
	if err != nil {
		c.Logger.Warn("read the sign-in of a stream", "err", err)
		return true // the next update tries again
	}
	if v == nil {
		_, _ = fmt.Fprint(w, "event: signedout\ndata: {}\n\n")
		return false
	}
	body, err := c.agentsList(ctx, v)
	if err != nil {
		c.Logger.Warn("list the agents for a stream", "err", err)
		return true
	}
	html, err := c.renderFragment("agents", "agents-list", body)
	if err != nil {
		c.Logger.Error("render the agents list", "err", err)
		return false
	}
	if sum := sha256.Sum256(html); sum != *last {
		*last = sum
	} else {
		_, err = fmt.Fprint(w, ": keep-alive\n\n")
		return err == nil
	}
	// JSON keeps the event one line: a carriage return in an agent's
	// name must not end the data line and start a field of its own.
	data, _ := json.Marshal(map[string]string{"html": string(html)})
	_, err = fmt.Fprintf(w, "event: agents\ndata: %s\n\n", data)
	return err == nil
}

// signalChan sets a capacity-1 channel's signal, if it is not set.
func signalChan(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// watchNewAccounts watches, for the operator, whose list holds every
// account's agents, the creation of accounts: each lands in accounts. An
// owner's list holds its own account only: no watch (nil).
func (c *Console) watchNewAccounts(ctx context.Context, v *viewer, accounts chan struct{}) (switchboard.Watch, error) {
	if !v.account.IsOperator() {
		return nil, nil
	}
	return c.Bus.WatchFunc(ctx, switchboard.AccountsSubject, func(bool) { signalChan(accounts) })
}

// watchAccounts watches the agents of the viewer's accounts (every account
// for the operator); each hint lands in hint, merged with those pending.
func (c *Console) watchAccounts(ctx context.Context, v *viewer, hint chan struct{}) ([]switchboard.Watch, error) {
	ids := []string{v.account.ID}
	if v.account.IsOperator() {
		all, err := c.Accounts.FindAccounts(ctx)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, a := range all {
			ids = append(ids, a.ID)
		}
	}
	notify := func(bool) {
		select {
		case hint <- struct{}{}:
		default:
		}
	}
	var watches []switchboard.Watch
	for _, id := range ids {
		w, err := c.Bus.WatchFunc(ctx, switchboard.AccountAgentsSubject(id), notify)
		if err != nil {
			return watches, err
		}
		watches = append(watches, w)
	}
	return watches, nil
}
