package front

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"google.golang.org/grpc"
)

// oneBinding is a reflector that offers one binding only: HTTP+JSON at
// /invoke, or gRPC on its listener (over TLS with h2, or h2c on plain
// HTTP), its card naming that interface alone. It records the headers of
// every request, gRPC calls included.
type oneBinding struct {
	*reflector
	mu      sync.Mutex
	headers []http.Header // guarded by mu
	token   string        // guarded by mu: if set, the bearer every call but the card's needs
}

func newOneBinding(t *testing.T, binding a2a.TransportProtocol, tls, streaming bool) *oneBinding {
	t.Helper()
	u := &oneBinding{reflector: &reflector{}}
	handler := a2asrv.NewHandler(u.reflector)
	g := grpc.NewServer()
	a2agrpc.NewHandler(handler).RegisterWith(g)
	rest := http.StripPrefix("/invoke", a2asrv.NewRESTHandler(handler))
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/.well-known/") {
			u.mu.Lock()
			u.headers = append(u.headers, r.Header.Clone())
			token := u.token
			u.mu.Unlock()
			if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		switch {
		case r.URL.Path == a2asrv.WellKnownAgentCardPath:
			iface := &a2a.AgentInterface{URL: u.srv.URL + "/invoke", ProtocolBinding: binding, ProtocolVersion: "1.0"}
			if binding == a2a.TransportProtocolGRPC {
				iface.URL = strings.TrimPrefix(strings.TrimPrefix(u.srv.URL, "https://"), "http://") // host:port
			}
			a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{Name: "one " + string(binding), Version: "1.0.0",
				SupportedInterfaces: []*a2a.AgentInterface{iface}, Capabilities: a2a.AgentCapabilities{Streaming: streaming},
				DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}).ServeHTTP(w, r)
		case binding == a2a.TransportProtocolGRPC && r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
			g.ServeHTTP(w, r)
		case binding == a2a.TransportProtocolHTTPJSON && strings.HasPrefix(r.URL.Path, "/invoke/"):
			rest.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	if tls {
		u.srv.EnableHTTP2 = true
		u.srv.StartTLS()
	} else {
		u.srv.Config.Protocols = new(http.Protocols)
		u.srv.Config.Protocols.SetHTTP1(true)
		u.srv.Config.Protocols.SetUnencryptedHTTP2(true)
		u.srv.Start()
	}
	t.Cleanup(func() {
		u.srv.Close()
		g.Stop()
	})
	return u
}

// requests returns the headers of the requests received but the card's.
func (u *oneBinding) requests() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.headers)
}

// TestForwardOneBinding: a front forwards to an upstream whose card offers
// only HTTP+JSON or only gRPC, in that binding, with the owner's
// credentials and the peer's label on every call, and a follow-up reaches
// the same task there.
func TestForwardOneBinding(t *testing.T) {
	for name, tt := range map[string]struct {
		binding        a2a.TransportProtocol
		tls, streaming bool
	}{
		"HTTPJSON":          {a2a.TransportProtocolHTTPJSON, true, false},
		"HTTPJSONStreaming": {a2a.TransportProtocolHTTPJSON, true, true},
		"GRPC":              {a2a.TransportProtocolGRPC, true, false},
		"GRPCStreaming":     {a2a.TransportProtocolGRPC, true, true},
		"GRPCh2c":           {a2a.TransportProtocolGRPC, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			u := newOneBinding(t, tt.binding, tt.tls, tt.streaming)
			creds := switchboard.FrontCredentials{Bearer: "owner-secret", Headers: map[string]string{"X-Basic": "pair"}}
			fw := forwarderTo(t, u.reflector, creds)
			got := forward(t, fw, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello")), nil)
			last := got.events[len(got.events)-1]
			if got.failure != "" || !strings.Contains(last, "TASK_STATE_COMPLETED") || !strings.Contains(strings.Join(got.events, ""), "you sent") {
				t.Fatalf("events %q, failure %q", got.events, got.failure)
			}
			if strings.Contains(strings.Join(got.events, ""), "owner-secret") {
				t.Fatal("the credential came back to the peer")
			}
			ask := forward(t, fw, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("ask")), nil)
			if !strings.Contains(ask.events[len(ask.events)-1], "TASK_STATE_INPUT_REQUIRED") {
				t.Fatalf("ask: events %q, failure %q", ask.events, ask.failure)
			}
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("blue"))
			if again := forward(t, fw, msg, ask); !strings.Contains(again.events[len(again.events)-1], "TASK_STATE_COMPLETED") {
				t.Fatalf("follow-up: events %q, failure %q", again.events, again.failure)
			}
			u.reflector.mu.Lock()
			followUp := u.reflector.followUp
			u.reflector.mu.Unlock()
			if !followUp {
				t.Fatal("the follow-up did not reach the upstream's task")
			}
			reqs := u.requests()
			if len(reqs) == 0 {
				t.Fatal("no call reached the upstream")
			}
			for _, h := range reqs {
				grpcCall := strings.HasPrefix(h.Get("Content-Type"), "application/grpc")
				if grpcCall != (tt.binding == a2a.TransportProtocolGRPC) {
					t.Fatalf("a call in the wrong binding: %v", h)
				}
				if h.Get("Authorization") != "Bearer owner-secret" || h.Get("X-Basic") != "pair" || h.Get("X-A2A-Peer") != "bob" ||
					!strings.Contains(h.Get("User-Agent"), "switchboard-front") {
					t.Fatalf("a call upstream lacks the credentials or the peer's label: %v", h)
				}
			}
		})
	}
}

// TestGRPCDialsThroughTheGuard: a gRPC connection dials with the guard of
// the client it is made from, which refuses a loopback upstream unless
// opened; the same call through an opened guard reaches it.
func TestGRPCDialsThroughTheGuard(t *testing.T) {
	for name, tls := range map[string]bool{"TLS": true, "h2c": false} {
		t.Run(name, func(t *testing.T) {
			u := newOneBinding(t, a2a.TransportProtocolGRPC, tls, false)
			iface := &a2a.AgentInterface{URL: u.srv.URL, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"}
			send := func(rt http.RoundTripper) error {
				hc, err := NewClient(rt, u.srv.URL, switchboard.FrontCredentials{Bearer: "owner-secret"})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := NewEndpointClient(ctx, hc, iface)
				if err != nil {
					return err
				}
				defer c.Destroy()
				_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
				return err
			}
			closed := ClientOptions{}
			if tls {
				closed.RootCAs = u.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
			}
			err := send(NewTransport(closed))
			if err == nil || !strings.Contains(err.Error(), netguard.ErrRefused.Error()) {
				t.Fatalf("through the closed guard: %v, want a refusal by the guard", err)
			}
			if n := len(u.requests()); n != 0 {
				t.Fatalf("%d gRPC calls reached the loopback upstream through the closed guard", n)
			}
			if err := send(loopbackTransport(u.srv, 0)); err != nil {
				t.Fatalf("through the opened guard: %v", err)
			}
		})
	}
}

// TestGRPCKeepsToTheClient: the credentials go over gRPC to the client's
// origin only, and a transport the gRPC connection cannot follow makes no
// connection at all.
func TestGRPCKeepsToTheClient(t *testing.T) {
	hc, err := NewClient(NewTransport(ClientOptions{}), "https://up.example.org/a2a", switchboard.FrontCredentials{Bearer: "owner-secret"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other := &a2a.AgentInterface{URL: "https://elsewhere.example.org", ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"}
	if _, err := NewEndpointClient(ctx, hc, other); err == nil || !strings.Contains(err.Error(), "not on the upstream's origin") {
		t.Fatalf("gRPC to another origin: %v, want a refusal", err)
	}
	odd := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) { return nil, nil })}
	same := &a2a.AgentInterface{URL: "https://up.example.org", ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"}
	if _, err := NewEndpointClient(ctx, odd, same); err == nil || !strings.Contains(err.Error(), "cannot go through") {
		t.Fatalf("gRPC through an unknown transport: %v, want a refusal", err)
	}
	for _, raw := range []string{"grpc://up.example.org", "up.example.org:443", "https://user:pw@up.example.org"} {
		u, _ := url.Parse(raw)
		if u == nil {
			continue
		}
		if target, err := grpcTarget(u); err == nil {
			t.Errorf("grpcTarget(%q) = %q, want a refusal", raw, target)
		}
	}
	for raw, want := range map[string]string{"https://up.example.org/a2a": "passthrough:///up.example.org:443", "http://10.0.0.1:8080": "passthrough:///10.0.0.1:8080"} {
		u, _ := url.Parse(raw)
		if got, err := grpcTarget(u); got != want || err != nil {
			t.Errorf("grpcTarget(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPickInterface: 1.0 before 0.3 whatever the binding, and within a
// version JSON-RPC, then HTTP+JSON, then gRPC; bindings narrow the choice.
func TestPickInterface(t *testing.T) {
	i := func(b a2a.TransportProtocol, v string) *a2a.AgentInterface {
		return &a2a.AgentInterface{URL: "https://a.example.org/" + string(b) + v, ProtocolBinding: b, ProtocolVersion: a2a.ProtocolVersion(v)}
	}
	for _, tt := range []struct {
		card []*a2a.AgentInterface
		want *a2a.AgentInterface
		only []a2a.TransportProtocol
	}{
		{[]*a2a.AgentInterface{i("GRPC", "1.0"), i("HTTP+JSON", "1.0"), i("JSONRPC", "1.0")}, i("JSONRPC", "1.0"), nil},
		{[]*a2a.AgentInterface{i("GRPC", "1.0"), i("HTTP+JSON", "1.0")}, i("HTTP+JSON", "1.0"), nil},
		{[]*a2a.AgentInterface{i("JSONRPC", "0.3"), i("GRPC", "1.0")}, i("GRPC", "1.0"), nil},
		{[]*a2a.AgentInterface{i("JSONRPC", "0.3"), i("GRPC", "1.0")}, i("JSONRPC", "0.3"), []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}},
		{[]*a2a.AgentInterface{i("GRPC", "2.0"), i("SOAP", "1.0")}, nil, nil},
	} {
		got, _, err := PickInterface(&a2a.AgentCard{SupportedInterfaces: tt.card}, tt.only...)
		if (got == nil) != (tt.want == nil) || (got != nil && got.URL != tt.want.URL) || (got == nil && err == nil) {
			t.Errorf("PickInterface(%v) = %v, %v; want %v", slices.Collect(func(yield func(string) bool) {
				for _, c := range tt.card {
					yield(string(c.ProtocolBinding) + " " + string(c.ProtocolVersion))
				}
			}), got, err, tt.want)
		}
	}
}

// TestPinInterfacesEveryBinding: whatever host a card's interface names,
// in any binding (a gRPC one as host:port), a front sends to its upstream
// URL's scheme, host and port: the checks made of that URL hold for every
// binding.
func TestPinInterfacesEveryBinding(t *testing.T) {
	card := &a2a.AgentCard{SupportedInterfaces: []*a2a.AgentInterface{
		{URL: "evil.example.org:443", ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"},
		{URL: "10.0.0.1:50051", ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"},
		{URL: "http://10.0.0.1/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		{URL: "grpc://10.0.0.1:50051", ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"},
	}}
	const upstream = "https://up.example.org/a2a"
	var elsewhere []string
	PinInterfaces(card, upstream, true, func(u string) { elsewhere = append(elsewhere, u) })
	for _, i := range card.SupportedInterfaces {
		if i.URL != upstream {
			t.Errorf("%s interface pinned to %q, want %q", i.ProtocolBinding, i.URL, upstream)
		}
		u, _ := url.Parse(i.URL)
		if target, err := grpcTarget(u); err != nil || target != "passthrough:///up.example.org:443" {
			t.Errorf("gRPC target %q, %v", target, err)
		}
	}
	if len(elsewhere) != 4 {
		t.Errorf("the interfaces on other hosts were not all noted: %q", elsewhere)
	}
}

// TestVerifyOneBinding: front verify checks the path to an upstream that
// offers only HTTP+JSON or only gRPC in that binding: GetTask of a task
// that does not exist is reachable, and a refused bearer is named.
func TestVerifyOneBinding(t *testing.T) {
	for name, binding := range map[string]a2a.TransportProtocol{"HTTPJSON": a2a.TransportProtocolHTTPJSON, "GRPC": a2a.TransportProtocolGRPC} {
		t.Run(name, func(t *testing.T) {
			u := newOneBinding(t, binding, true, false)
			u.mu.Lock()
			u.token = "right"
			u.mu.Unlock()
			opts := ClientOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
				RootCAs: u.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
			for bearer, want := range map[string]string{"right": switchboard.FrontReachable, "wrong": switchboard.FrontAuthRejected} {
				store := &oneFront{f: switchboard.Front{AgentID: "a", Upstream: u.srv.URL + "/invoke",
					Credentials: switchboard.FrontCredentials{Bearer: bearer}, UpdatedAt: time.Now()}}
				s := NewService(store, nil, opts, 0, slog.New(slog.DiscardHandler))
				v, err := s.Verify(context.Background(), "a")
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
				if v.Reason != want || v.OK != (want == switchboard.FrontReachable) || v.Method != "GetTask" || v.Binding != BindingName(binding) {
					t.Fatalf("verify with the %s bearer: %+v, want %s over %s", bearer, v, want, BindingName(binding))
				}
			}
		})
	}
}
