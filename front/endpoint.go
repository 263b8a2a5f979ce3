package front

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
)

// PickInterface chooses the card's JSON-RPC interface of A2A 1.0, else
// the one of 0.3: the choice of every sender of one message (switchboard
// send, the MCP tool send).
func PickInterface(card *a2a.AgentCard) (*a2a.AgentInterface, switchboard.ProtocolVersion, error) {
	var v03 *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i == nil || !strings.EqualFold(string(i.ProtocolBinding), string(a2a.TransportProtocolJSONRPC)) {
			continue
		}
		switch v := string(i.ProtocolVersion); {
		case v == "1" || strings.HasPrefix(v, "1."):
			return i, switchboard.ProtocolV1, nil
		case (v == "0.3" || strings.HasPrefix(v, "0.3.")) && v03 == nil:
			v03 = i
		}
	}
	if v03 != nil {
		return v03, switchboard.ProtocolV03, nil
	}
	return nil, "", fmt.Errorf("its card offers no JSON-RPC interface of A2A 1.0 or 0.3 (%s)", DescribeInterfaces(card))
}

// NewEndpointClient returns an a2a-go client for one interface, speaking
// its version over JSON-RPC with hc.
func NewEndpointClient(ctx context.Context, hc *http.Client, iface *a2a.AgentInterface) (*a2aclient.Client, error) {
	return a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{iface}, a2aclient.WithDefaultsDisabled(),
		a2aclient.WithJSONRPCTransport(hc), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}))
}

// EndpointInterface is the JSON-RPC interface of a recorded endpoint and
// version (an outbox record's).
func EndpointInterface(endpoint string, proto switchboard.ProtocolVersion) *a2a.AgentInterface {
	return &a2a.AgentInterface{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(proto)}
}
