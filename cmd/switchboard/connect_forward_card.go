package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// connect returns the client of the forward target, reading its card the
// first time (and again after a failure).
func (f *forwarder) connect(ctx context.Context) (*upstream, error) {
	f.mu.Lock()
	up := f.upstream
	f.mu.Unlock()
	if up != nil {
		return up, nil
	}
	cctx, cancel := context.WithTimeout(ctx, cardTimeout)
	defer cancel()
	card, err := f.resolveCard(cctx)
	if err != nil {
		return nil, err
	}
	f.pinInterfaces(card)
	// Both JSON-RPC transports: the card's interfaces decide between them,
	// newest version first.
	client, err := a2aclient.NewFromCard(cctx, card, a2aclient.WithDefaultsDisabled(),
		a2aclient.WithJSONRPCTransport(f.http), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: f.http}))
	if err != nil {
		return nil, fmt.Errorf("no JSON-RPC interface of version 1.0 or 0.3 on its card (%s): %w", describeInterfaces(card), err)
	}
	up = &upstream{client: client, streaming: card.Capabilities.Streaming}
	f.mu.Lock()
	if f.upstream == nil {
		f.upstream = up
	} else {
		_ = client.Destroy()
		up = f.upstream
	}
	f.mu.Unlock()
	f.log.Info("read the forward target's card", "name", card.Name, "interfaces", describeInterfaces(card), "streaming", up.streaming)
	return up, nil
}

// reset forgets the target's client after a failure, so that the next task
// reads its card again (it may have restarted or changed).
func (f *forwarder) reset(up *upstream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.upstream == up {
		f.upstream = nil
		_ = up.client.Destroy()
	}
}

// resolveCard reads the target's agent card.
func (f *forwarder) resolveCard(ctx context.Context) (*a2a.AgentCard, error) {
	return resolveAgentCard(ctx, f.http, f.target)
}

// resolveAgentCard reads the agent card of the A2A server at target with
// hc. The parser takes both 1.0 and 0.3 cards. It looks at the well-known
// paths under the URL, then under its origin, for the current name of the
// card, then the older one.
func resolveAgentCard(ctx context.Context, hc *http.Client, target string) (*a2a.AgentCard, error) {
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2av0.NewAgentCardParser()}
	var errs []error
	for _, loc := range cardLocations(target) {
		card, err := resolver.Resolve(ctx, loc.base, agentcard.WithPath(loc.path))
		if err == nil && len(card.SupportedInterfaces) == 0 {
			err = errors.New("the card names no interface")
		}
		if err == nil {
			return card, nil
		}
		errs = append(errs, fmt.Errorf("%s%s: %w", loc.base, loc.path, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("read its agent card: %w", errors.Join(errs...))
}

// cardLocation is where a card may be: base URL and path.
type cardLocation struct{ base, path string }

// cardLocations lists where the card of the A2A server at target may be.
func cardLocations(target string) []cardLocation {
	bases := []string{target}
	if u, err := url.Parse(target); err == nil && strings.Trim(u.Path, "/") != "" {
		bases = append(bases, u.Scheme+"://"+u.Host)
	}
	var out []cardLocation
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		for _, b := range bases {
			out = append(out, cardLocation{b, path})
		}
	}
	return out
}

// pinInterfaces points every interface of the card at the --forward URL's
// scheme, host and port, keeping the path the card names: the --forward
// URL, which the operator chose, decides where tasks (and the
// --forward-token) go, and the card only which protocol version and
// endpoint path to use. A card may name another host for good reasons (its
// public address behind a proxy) or bad ones; either way nothing is sent
// there.
func (f *forwarder) pinInterfaces(card *a2a.AgentCard) {
	pinCardInterfaces(card, f.target, func(cardURL string) {
		f.log.Info("the forward target's card names another host; sending to the --forward host instead",
			"card_url", cardURL, "forward", f.target)
	})
}

// pinCardInterfaces points every interface of the card at target's scheme,
// host and port, keeping the path the card names; elsewhere, if set, is
// told of each interface that named another host.
func pinCardInterfaces(card *a2a.AgentCard, target string, elsewhere func(cardURL string)) {
	t, err := url.Parse(target)
	if err != nil {
		return
	}
	for _, iface := range card.SupportedInterfaces {
		if iface == nil {
			continue
		}
		u, err := url.Parse(iface.URL)
		if err != nil || u.Opaque != "" {
			u = &url.URL{Path: t.Path} // unusable: the target URL itself
		}
		if u.Host != "" && !sameOrigin(u, t) && elsewhere != nil {
			elsewhere(u.Redacted())
		}
		u.Scheme, u.Host, u.User = t.Scheme, t.Host, nil
		iface.URL = u.String()
	}
}

// describeInterfaces lists a card's interfaces for logs and errors.
func describeInterfaces(card *a2a.AgentCard) string {
	var parts []string
	for _, i := range card.SupportedInterfaces {
		if i != nil {
			parts = append(parts, fmt.Sprintf("%s %s at %s", i.ProtocolBinding, i.ProtocolVersion, i.URL))
		}
	}
	return strings.Join(parts, "; ")
}
