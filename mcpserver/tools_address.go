package mcpserver

import (
	"context"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// A send's to that is a URL names an agent by its address: an address of
// this deployment ({base}/a/{handle}, as publicurl.HandleAt reads it),
// which the network reaches by the handle, or the URL of one of the
// agent's synced aliases. Any other URL is refused: a message meant for an
// agent elsewhere must never reach the agent of the same handle here.

// sameAddress reports whether the URLs a and b name the same address:
// scheme, host and port as sameOrigin compares them, the same path but
// for a trailing slash, the same query.
func sameAddress(a, b string) bool {
	au, err := url.Parse(strings.TrimSpace(a))
	if err != nil {
		return false
	}
	bu, err := url.Parse(strings.TrimSpace(b))
	if err != nil {
		return false
	}
	return au.User == nil && bu.User == nil && au.Opaque == "" && bu.Opaque == "" &&
		strings.EqualFold(au.Scheme, bu.Scheme) && strings.EqualFold(hostPort(au), hostPort(bu)) &&
		strings.TrimRight(au.Path, "/") == strings.TrimRight(bu.Path, "/") && au.RawQuery == bu.RawQuery
}

// aliasAt returns the agent's synced alias whose URL is raw, or nil.
func (s *Server) aliasAt(ctx context.Context, tg *target, raw string) (*switchboard.OutboundPeer, error) {
	if s.OutboundPeers == nil {
		return nil, nil
	}
	all, err := s.OutboundPeers.List(ctx, tg.agent.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if sameAddress(p.URL, raw) {
			return p, nil
		}
	}
	return nil, nil
}

// elsewhere is the refusal of a URL that is no address of this deployment
// and no synced alias's.
func elsewhere(to string) error {
	return publicurl.NotAddress(to, "to send to a remote agent, sync it as an alias: switchboard peers sync")
}
