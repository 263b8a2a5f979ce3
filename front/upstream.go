package front

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard/netguard"
)

// ResolveCard reads the agent card of the A2A server at target with hc.
// The parser takes both 1.0 and 0.3 cards. With cardURL set, it reads that
// URL; otherwise it looks at the well-known paths under target, then under
// its origin, for the current name of the card, then the older one.
func ResolveCard(ctx context.Context, hc *http.Client, target, cardURL string) (*a2a.AgentCard, error) {
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2av0.NewAgentCardParser()}
	locs := cardLocations(target)
	if cardURL != "" {
		u, err := url.Parse(cardURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("card URL %q is not a URL", cardURL)
		}
		locs = []cardLocation{{u.Scheme + "://" + u.Host, u.RequestURI()}}
	}
	var errs []error
	for _, loc := range locs {
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

// PinInterfaces points every interface of the card at target: its scheme,
// host and port, and with wholeURL its path too (otherwise the card's path
// is kept). The target, which the operator chose, decides where work (and
// the credentials) go; the card decides only the protocol version (and the
// endpoint's path, without wholeURL). elsewhere, if set, is told of each
// interface that named another host.
func PinInterfaces(card *a2a.AgentCard, target string, wholeURL bool, elsewhere func(cardURL string)) {
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
			// A gRPC interface may be named host:port.
			if host, _, err := net.SplitHostPort(iface.URL); err == nil && elsewhere != nil && !strings.EqualFold(host, t.Hostname()) {
				elsewhere(iface.URL)
			}
			u = &url.URL{Path: t.Path} // unusable: the target URL itself
		}
		if u.Host != "" && !netguard.SameOrigin(u, t) && elsewhere != nil {
			elsewhere(u.Redacted())
		}
		if wholeURL {
			iface.URL = t.String()
			continue
		}
		u.Scheme, u.Host, u.User = t.Scheme, t.Host, nil
		iface.URL = u.String()
	}
}

// DescribeInterfaces lists a card's interfaces for logs and errors.
func DescribeInterfaces(card *a2a.AgentCard) string {
	var parts []string
	for _, i := range card.SupportedInterfaces {
		if i != nil {
			parts = append(parts, fmt.Sprintf("%s %s at %s", i.ProtocolBinding, i.ProtocolVersion, i.URL))
		}
	}
	return strings.Join(parts, "; ")
}

// FallbackCard is the card assumed for an upstream whose own card cannot
// be read: JSON-RPC at target, 1.0 first, then 0.3.
func FallbackCard(target string) *a2a.AgentCard {
	return &a2a.AgentCard{Name: "upstream", SupportedInterfaces: []*a2a.AgentInterface{
		{URL: target, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
		{URL: target, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
	}}
}
