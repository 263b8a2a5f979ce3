package front

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// An upstream that offers only gRPC is called over a gRPC connection made
// from the HTTP client every other binding uses, so that nothing about
// where and how the calls go can differ between bindings: the connection
// dials with the client's transport's dialer (for a front, the network
// guard's, which refuses private and loopback addresses unless opened),
// checks certificates with its TLS configuration, sends as gRPC metadata
// the headers its HeaderTransport layers would set (the credentials, to
// the upstream's origin only, and the peer's label), and bounds answers
// as its boundedTransport does. A client whose transport is of another
// kind cannot speak gRPC: better no call than an unguarded one.

// HeaderTransport is an http.RoundTripper that wraps another and sets
// headers on the requests it passes on. A gRPC connection made for a
// client with such a transport sends the same headers, as metadata.
type HeaderTransport interface {
	http.RoundTripper
	// Unwrap returns the transport it wraps.
	Unwrap() http.RoundTripper
	// Headers returns the headers it sets on a request to u made with
	// ctx (nil: none), or an error if it refuses to send one there.
	Headers(ctx context.Context, u *url.URL) (http.Header, error)
}

// grpcClient is what a gRPC connection takes from an HTTP client.
type grpcClient struct {
	layers []HeaderTransport // outermost first
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	tls    *tls.Config // nil: the system's roots
	max    int64       // the bound of an answer; 0: gRPC's default
}

// grpcClientOf returns what a gRPC connection takes from hc, or an error
// if hc's transport is of a kind it cannot follow.
func grpcClientOf(hc *http.Client) (*grpcClient, error) {
	rt := http.DefaultTransport
	if hc != nil && hc.Transport != nil {
		rt = hc.Transport
	}
	g := &grpcClient{}
	for {
		switch t := rt.(type) {
		case HeaderTransport:
			g.layers = append(g.layers, t)
			rt = t.Unwrap()
		case *boundedTransport:
			g.max = t.max
			rt = t.base
		case *http.Transport:
			g.dial = t.DialContext
			if g.dial == nil {
				g.dial = (&net.Dialer{}).DialContext
			}
			g.tls = t.TLSClientConfig
			return g, nil
		default:
			return nil, fmt.Errorf("gRPC cannot go through a transport of type %T", rt)
		}
	}
}

// headers returns the headers the client's layers set on a request to u,
// as the outermost sets them last.
func (g *grpcClient) headers(ctx context.Context, u *url.URL) (http.Header, error) {
	out := http.Header{}
	for i := len(g.layers) - 1; i >= 0; i-- {
		h, err := g.layers[i].Headers(ctx, u)
		if err != nil {
			return nil, err
		}
		for k, vs := range h {
			out[http.CanonicalHeaderKey(k)] = vs
		}
	}
	return out, nil
}

// grpcTarget returns the address a gRPC interface's URL names, for
// grpc.NewClient: its host and port (443 for https, 80 for http), passed
// to the dialer as they are. Only http and https URLs are taken: https is
// gRPC over TLS, http is h2c.
func grpcTarget(u *url.URL) (string, error) {
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", errors.New("the gRPC interface's URL is not an http(s) URL without credentials")
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return "passthrough:///" + net.JoinHostPort(u.Hostname(), port), nil
}

// conn returns a gRPC connection to the interface at rawURL.
func (g *grpcClient) conn(rawURL string) (*grpc.ClientConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("the gRPC interface's URL is not a URL")
	}
	target, err := grpcTarget(u)
	if err != nil {
		return nil, err
	}
	// The headers as set without a request's context: checked once here
	// (a transport that refuses the origin refuses the connection), and
	// the User-Agent, which gRPC takes per connection.
	h, err := g.headers(context.Background(), u)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if g.tls != nil {
			cfg = g.tls.Clone()
		}
		cfg.ServerName = u.Hostname()
		creds = credentials.NewTLS(cfg) // it asks for h2 by ALPN
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return g.dial(ctx, "tcp", addr)
		}),
		grpc.WithNoProxy(), // a proxy would dial in the dialer's place
		grpc.WithPerRPCCredentials(&grpcHeaders{g: g, u: u}),
	}
	if ua := h.Get("User-Agent"); ua != "" {
		opts = append(opts, grpc.WithUserAgent(ua))
	}
	if g.max > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(min(g.max, 1<<30)))))
	}
	return grpc.NewClient(target, opts...)
}

// grpcHeaders sends a client's headers with each gRPC call, as metadata.
type grpcHeaders struct {
	g *grpcClient
	u *url.URL
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (c *grpcHeaders) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	h, err := c.g.headers(ctx, c.u)
	if err != nil {
		return nil, err
	}
	md := make(map[string]string, len(h))
	for k, vs := range h {
		switch k = strings.ToLower(k); {
		case len(vs) == 0, k == "user-agent", k == "host", k == "content-type", k == "te", strings.HasPrefix(k, "grpc-"):
			continue
		default:
			md[k] = strings.Join(vs, ", ")
		}
	}
	return md, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: the
// headers go over h2c where the client would send them over plain HTTP.
func (c *grpcHeaders) RequireTransportSecurity() bool { return false }

// grpcTransports returns the client options that speak gRPC, A2A 1.0 and
// 0.3, through a connection made from hc (see grpcClientOf).
func grpcTransports(hc *http.Client) []a2aclient.FactoryOption {
	factory := func(newTransport func(*grpc.ClientConn) a2aclient.Transport) a2aclient.TransportFactory {
		return a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			g, err := grpcClientOf(hc)
			if err != nil {
				return nil, err
			}
			conn, err := g.conn(iface.URL)
			if err != nil {
				return nil, err
			}
			return newTransport(conn), nil
		})
	}
	return []a2aclient.FactoryOption{
		a2aclient.WithTransport(a2a.TransportProtocolGRPC, factory(a2agrpc.NewGRPCTransport)),
		a2aclient.WithCompatTransport("0.3", a2a.TransportProtocolGRPC, factory(a2agrpcv0.NewGRPCTransport)),
	}
}
