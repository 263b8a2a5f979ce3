package a2abind

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2aedge"
	"github.com/switchboard-dev/switchboard/a2arpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The gRPC binding (the a2a.v1.A2AService of A2A 1.0's proto) is served on
// the server's own listener: HTTP/2 with TLS where the server has TLS,
// h2c on plain HTTP (the http.Server must allow unencrypted HTTP/2). A
// request is gRPC by its Content-Type, application/grpc. A gRPC method's
// path is fixed, so the agent is named by the request's tenant, as A2A 1.0
// names one of several agents behind one endpoint: an agent's handle, or a
// community's name for its address. On an agent domain the domain names
// the agent and the tenant may be empty (or the agent's handle).

// newGRPC builds the gRPC server of the binding over h. Messages are
// bounded by the body limit of every other binding.
func (s *Face) newGRPC(h *bindingHandler) *grpc.Server {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(int(min(s.Cfg.MaxBody, math.MaxInt32))),
		grpc.UnaryInterceptor(recordTenant), grpc.StreamInterceptor(recordStreamTenant))
	a2agrpc.NewHandler(h).RegisterWith(g)
	return g
}

// isGRPC reports whether r is a gRPC call.
func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// serveGRPC serves one gRPC call. domainAgent is the agent of the agent
// domain the call reached, nil on the deployment's own host. The call is
// authenticated once the SDK's transport has decoded its tenant
// (bindingState.resolve), before any operation.
func (s *Face) serveGRPC(w http.ResponseWriter, r *http.Request, domainAgent *switchboard.Agent) {
	st := &bindingState{r: r}
	st.resolve = func(ctx context.Context, tenant string) (*a2aedge.Call, error) {
		target, err := s.grpcTarget(ctx, r, tenant, domainAgent)
		if err != nil {
			return nil, err
		}
		return s.grpcCall(ctx, r, target)
	}
	s.bind.grpc.ServeHTTP(w, r.WithContext(withBinding(r.Context(), st)))
}

// grpcTarget finds the address a gRPC call's tenant names: an agent by
// handle, else a community by name; no tenant names the default agent
// (serve --default-agent), as the root paths do. A disabled account's agent is not
// found, as at its address.
func (s *Face) grpcTarget(ctx context.Context, r *http.Request, tenant string, domainAgent *switchboard.Agent) (a2aedge.Target, error) {
	tenant = strings.ToLower(strings.TrimSpace(tenant))
	if domainAgent != nil {
		if tenant != "" && tenant != domainAgent.Handle {
			return a2aedge.Target{}, errNoTenant
		}
		return a2aedge.AgentTarget(domainAgent, s.ReachedAddress(r, domainAgent)), nil
	}
	if tenant == "" {
		tenant = s.Cfg.DefaultAgent // the agent served at the root, if any
	}
	if tenant == "" {
		return a2aedge.Target{}, switchboard.Errorf(switchboard.EINVALID, "Invalid params: tenant is required: the agent's handle, or the community's name")
	}
	agent, err := s.Agents.FindAgentByHandle(ctx, tenant)
	switch {
	case err == nil && !agent.AccountDisabled:
		return a2aedge.AgentTarget(agent, s.BaseURL(r)+"/a/"+agent.Handle), nil
	case err != nil && switchboard.ErrorCode(err) != switchboard.ENOTFOUND:
		return a2aedge.Target{}, err
	}
	if c, err := s.LookupCommunity(ctx, tenant); err == nil {
		return a2aedge.CommunityTarget(c, s.CommunityURL(r, c.Name)), nil
	} else if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		return a2aedge.Target{}, err
	}
	return a2aedge.Target{}, errNoTenant
}

var errNoTenant = switchboard.Errorf(switchboard.ENOTFOUND, "no agent or community is named by this tenant")

// grpcCall authenticates a gRPC call at target and counts it against the
// peer's rate limit, as serveRPC does a JSON-RPC call.
func (s *Face) grpcCall(ctx context.Context, r *http.Request, target a2aedge.Target) (*a2aedge.Call, error) {
	caller, err := s.Authenticate(r, target)
	if err != nil {
		return nil, err
	}
	if ok, retry, _ := s.Limiter.Allow(ctx, caller.Peer().Key()); !ok {
		secs := max(int(math.Ceil(retry.Seconds())), 1)
		_ = grpc.SetHeader(ctx, metadata.Pairs("retry-after", strconv.Itoa(secs)))
		return nil, switchboard.Errorf(switchboard.ERATELIMITED, "rate limit exceeded: retry in %d s", secs)
	}
	if _, err := a2arpc.RequestedVersion(r); err != nil {
		return nil, err
	}
	return a2aedge.NewCall(r.URL.Path, target, caller, switchboard.ProtocolV1), nil
}

// tenanted is a request message of A2A's proto: each has a tenant.
type tenanted interface{ GetTenant() string }

// recordTenant records on a unary call's bindingState what the SDK's
// conversion from the proto drops: the request's tenant (CancelTask's is
// not passed on) and a negative history length (dropped as if absent: it
// is refused, as over JSON-RPC). A task list's page_size 0 stays "the
// default": the a2a-go gRPC client sends it present, as 0, when its caller
// names no page size.
func recordTenant(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if st, _ := ctx.Value(bindingKey{}).(*bindingState); st != nil {
		if t, ok := req.(tenanted); ok {
			st.tenant = t.GetTenant()
		}
		switch m := req.(type) {
		case *a2apb.GetTaskRequest:
			st.negativeHistory = m.HistoryLength != nil && *m.HistoryLength < 0
		case *a2apb.ListTasksRequest:
			st.negativeHistory = m.HistoryLength != nil && *m.HistoryLength < 0
		}
	}
	return next(ctx, req)
}

// recordStreamTenant is recordTenant for streaming calls: the tenant of
// the request message the handler receives.
func recordStreamTenant(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	return next(srv, &tenantStream{ServerStream: ss})
}

type tenantStream struct{ grpc.ServerStream }

func (s *tenantStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if st, _ := s.Context().Value(bindingKey{}).(*bindingState); st != nil && err == nil {
		if t, ok := m.(tenanted); ok {
			st.tenant = t.GetTenant()
		}
	}
	return err
}
