package front

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
)

// Bindings are the protocol bindings a client here speaks, in the order it
// prefers them among the interfaces of one protocol version: JSON-RPC (the
// one every A2A server offers, and the fastest here), then HTTP+JSON, then
// gRPC (a connection of its own). A newer protocol version comes first,
// whatever its binding: a card offering gRPC in 1.0 and JSON-RPC in 0.3
// is spoken to in gRPC.
var Bindings = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC}

// BindingName is how docs and outputs name a binding: JSON-RPC,
// HTTP+JSON or gRPC.
func BindingName(b a2a.TransportProtocol) string {
	switch {
	case strings.EqualFold(string(b), string(a2a.TransportProtocolJSONRPC)):
		return "JSON-RPC"
	case strings.EqualFold(string(b), string(a2a.TransportProtocolHTTPJSON)):
		return "HTTP+JSON"
	case strings.EqualFold(string(b), string(a2a.TransportProtocolGRPC)):
		return "gRPC"
	}
	return string(b)
}

// PickInterface chooses the card's interface to send to: of A2A 1.0, else
// of 0.3, in the first of bindings the card offers in that version
// (default: Bindings, in their order). It is the choice of every sender
// of one message (switchboard send, the MCP tool send) and of a front's
// forwarding.
func PickInterface(card *a2a.AgentCard, bindings ...a2a.TransportProtocol) (*a2a.AgentInterface, switchboard.ProtocolVersion, error) {
	if len(bindings) == 0 {
		bindings = Bindings
	}
	for _, version := range []switchboard.ProtocolVersion{switchboard.ProtocolV1, switchboard.ProtocolV03} {
		for _, b := range bindings {
			for _, i := range card.SupportedInterfaces {
				if i != nil && strings.EqualFold(string(i.ProtocolBinding), string(b)) && interfaceVersion(i) == version {
					return i, version, nil
				}
			}
		}
	}
	names := make([]string, len(bindings))
	for i, b := range bindings {
		names[i] = BindingName(b)
	}
	return nil, "", fmt.Errorf("its card offers no interface of A2A 1.0 or 0.3 in %s (%s)", strings.Join(names, ", "), DescribeInterfaces(card))
}

// interfaceVersion is the protocol version of an interface, 1.0 or 0.3,
// or "" for another.
func interfaceVersion(i *a2a.AgentInterface) switchboard.ProtocolVersion {
	switch v := string(i.ProtocolVersion); {
	case v == "1" || strings.HasPrefix(v, "1."):
		return switchboard.ProtocolV1
	case v == "0.3" || strings.HasPrefix(v, "0.3."):
		return switchboard.ProtocolV03
	}
	return ""
}

// NewEndpointClient returns an a2a-go client for one interface, speaking
// its version and binding (JSON-RPC, HTTP+JSON or gRPC) with hc. A gRPC
// connection is made from hc: its dialer, TLS configuration and headers
// (see HeaderTransport).
func NewEndpointClient(ctx context.Context, hc *http.Client, iface *a2a.AgentInterface) (*a2aclient.Client, error) {
	return newClient(ctx, hc, iface, a2aclient.WithJSONRPCTransport(hc))
}

// newClient returns a client for one interface, speaking JSON-RPC 1.0
// with jsonrpc and every other binding and version with the SDK's
// transports over hc.
func newClient(ctx context.Context, hc *http.Client, iface *a2a.AgentInterface, jsonrpc a2aclient.FactoryOption) (*a2aclient.Client, error) {
	opts := append([]a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), jsonrpc,
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}),
		a2aclient.WithRESTTransport(hc), a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc}),
	}, grpcTransports(hc)...)
	opts = append(opts, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: slices.Clone(Bindings)}))
	return a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{iface}, opts...)
}

// EndpointInterface is the JSON-RPC interface of a recorded endpoint and
// version (an outbox record's).
func EndpointInterface(endpoint string, proto switchboard.ProtocolVersion) *a2a.AgentInterface {
	return &a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(proto)}
}
