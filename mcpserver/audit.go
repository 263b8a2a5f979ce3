package mcpserver

import (
	"context"
	"net"
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// clientAddrKey marks the context value of the request's client address.
type clientAddrKey struct{}

// clientAddr is the address r came from (Deps.ClientAddr, or the peer).
func (s *Server) clientAddr(r *http.Request) string {
	if s.ClientAddr != nil {
		return s.ClientAddr(r)
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// recordCreate records an agent create_agent made (or failed to make)
// with the MCP token tok, in the audit log: by the MCP client holding the
// token, named by its label.
func (s *Server) recordCreate(ctx context.Context, tok *switchboard.Token, g *switchboard.Agent, err error) {
	if s.Audit == nil {
		return
	}
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	t := audit.Agent(g)
	t.Detail = "mode " + string(g.Mode) + ", by create_agent"
	e := audit.Entry(nil, addr, switchboard.AuditAgentCreate, t, err)
	e.ActorKind, e.ActorID = switchboard.AuditMCPClient, "mcp:"+tok.Label
	s.Audit.Record(ctx, e)
}
