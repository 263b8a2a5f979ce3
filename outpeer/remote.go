package outpeer

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/netguard"
)

// Remote is a client of the agent one synced alias names: its token goes
// with every request to the alias's origin and to no other.
type Remote struct {
	// Endpoint is the JSON-RPC URL the calls go to, on the alias's origin.
	Endpoint string
	// Protocol is the A2A version spoken there.
	Protocol switchboard.ProtocolVersion

	alias   string
	timeout time.Duration
	client  *a2aclient.Client
}

// Dial reads the agent card at the alias's URL (1.0 or 0.3) and returns a
// client of its JSON-RPC interface, A2A 1.0 preferred, pinned to the
// alias's origin whatever host the card names. A token that does not open
// is ECONFLICT.
func (s *Service) Dial(ctx context.Context, p *switchboard.OutboundPeer) (*Remote, error) {
	hc, err := s.httpClient(p)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	card, err := front.ResolveCard(cctx, hc, p.URL, "")
	if err != nil {
		return nil, remoteError(p.Alias, err)
	}
	front.PinInterfaces(card, p.URL, false, nil)
	// JSON-RPC only: DialEndpoint calls a recorded endpoint again in
	// JSON-RPC, as an outbox record keeps no binding.
	iface, proto, err := front.PickInterface(card, a2a.TransportProtocolJSONRPC)
	if err != nil {
		return nil, switchboard.Errorf(switchboard.EUPSTREAM, "%s: %s", p.Alias, clip(err.Error(), 500))
	}
	return s.remote(ctx, p, hc, iface, proto)
}

// DialEndpoint returns a client of a recorded endpoint and version (an
// outbox record's) with the alias's token, without reading the card. The
// endpoint must be on the alias's origin: the token goes nowhere else.
func (s *Service) DialEndpoint(ctx context.Context, p *switchboard.OutboundPeer, endpoint string, proto switchboard.ProtocolVersion) (*Remote, error) {
	hc, err := s.httpClient(p)
	if err != nil {
		return nil, err
	}
	e, err1 := url.Parse(endpoint)
	a, err2 := url.Parse(p.URL)
	if err1 != nil || err2 != nil || !netguard.SameOrigin(e, a) {
		return nil, switchboard.Errorf(switchboard.ECONFLICT,
			"the alias %s now names another host than the one this task was sent to: its token is not sent there", p.Alias)
	}
	return s.remote(ctx, p, hc, front.EndpointInterface(endpoint, proto), proto)
}

// httpClient returns the client of the alias: its token to its origin
// only, through the guarded, bounded transport, no redirects.
func (s *Service) httpClient(p *switchboard.OutboundPeer) (*http.Client, error) {
	if p.Unreadable || p.Token == "" {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "the token of alias %s no longer opens on this server: sync it again", p.Alias)
	}
	return front.NewClientAs(s.transport, p.URL, switchboard.FrontCredentials{Bearer: p.Token}, "switchboard-send")
}

func (s *Service) remote(ctx context.Context, p *switchboard.OutboundPeer, hc *http.Client, iface *a2a.AgentInterface, proto switchboard.ProtocolVersion) (*Remote, error) {
	client, err := front.NewEndpointClient(ctx, hc, iface)
	if err != nil {
		return nil, switchboard.Errorf(switchboard.EUPSTREAM, "%s: %s", p.Alias, clip(err.Error(), 500))
	}
	return &Remote{Endpoint: iface.URL, Protocol: proto, alias: p.Alias, client: client, timeout: s.Timeout}, nil
}

// Send sends msg and asks for an answer at once (the remote agent's
// task as it stands, or its message), without waiting for the agent.
func (r *Remote) Send(ctx context.Context, msg *a2a.Message) (a2a.SendMessageResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	res, err := r.client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		return nil, remoteError(r.alias, err)
	}
	return res, nil
}

// GetTask reads a task the agent sent there.
func (r *Remote) GetTask(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	t, err := r.client.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		return nil, remoteError(r.alias, err)
	}
	return t, nil
}

// Close releases the client.
func (r *Remote) Close() { _ = r.client.Destroy() }

// remoteError is a failed call to the alias's agent as its caller sees
// it: EUPSTREAM, with what happened (no URL of a request that got no
// answer), and what to do about a refused token.
func remoteError(alias string, err error) error {
	var uerr *url.Error
	msg := err.Error()
	if errors.As(err, &uerr) || errors.Is(err, netguard.ErrRefused) || errors.Is(err, context.DeadlineExceeded) {
		msg = netguard.DescribeError(err).Error()
	}
	switch {
	case errors.Is(err, netguard.ErrRefused):
		msg += " (a private address: allowed only where the server runs with --allow-private-networks)"
	case errors.Is(err, a2a.ErrUnauthenticated) || errors.Is(err, a2a.ErrUnauthorized) ||
		strings.Contains(msg, " 401") || strings.Contains(msg, " 403"):
		msg = "it refused the token (revoked or rotated?): get a new one and run  switchboard peers sync  again; " + msg
	}
	return switchboard.Errorf(switchboard.EUPSTREAM, "%s: %s", alias, clip(msg, 500))
}
