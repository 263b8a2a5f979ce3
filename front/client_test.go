package front

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// loopbackTransport is NewTransport's, allowed to reach the test servers.
func loopbackTransport(srv *httptest.Server, max int64) http.RoundTripper {
	opts := ClientOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, MaxBody: max}
	if srv.TLS != nil {
		opts.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	}
	return NewTransport(opts)
}

func TestClientCredentialsStayOnTheOrigin(t *testing.T) {
	var got []http.Header
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	creds := switchboard.FrontCredentials{Bearer: "owner-secret", Headers: map[string]string{"X-Access": "pair"}}
	c, err := NewClient(loopbackTransport(srv, 0), srv.URL+"/a2a", creds)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(WithPeer(context.Background(), "bob\r\nX-Evil: 1"), "POST", srv.URL+"/a2a", nil)
	req.Header.Set("Authorization", "Bearer the-peers-own")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := got[0]
	if h.Get("Authorization") != "Bearer owner-secret" || h.Get("X-Access") != "pair" || h.Get("X-Evil") != "" {
		t.Fatalf("headers upstream: %v", h)
	}
	if p := h.Get("X-A2A-Peer"); p != "bob??X-Evil: 1" {
		t.Fatalf("X-A2A-Peer %q", p)
	}
	// Another origin gets nothing, not even the request.
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a request reached another origin") }))
	defer other.Close()
	if _, err := c.Post(other.URL+"/a2a", "application/json", nil); err == nil {
		t.Fatal("a request to another origin went through")
	}
	// Redirects are not followed.
	if _, err := c.Post(srv.URL+"/redirect", "application/json", nil); !errors.Is(err, ErrRedirected) {
		t.Fatalf("redirect: %v, want ErrRedirected", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests reached the upstream, want 2 (the redirect not followed)", len(got))
	}
}

func TestClientBoundsTheAnswer(t *testing.T) {
	const max = 1000
	for _, n := range []int{0, 999, 1000, 1001, 5000} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has("chunked") {
				w.(http.Flusher).Flush() // no Content-Length
			}
			_, _ = io.WriteString(w, strings.Repeat("x", n))
		}))
		c, _ := NewClient(loopbackTransport(srv, max), srv.URL, switchboard.FrontCredentials{})
		for _, q := range []string{"", "?chunked"} {
			resp, err := c.Get(srv.URL + "/" + q)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if tooLarge := errors.Is(err, ErrTooLarge); tooLarge != (n > max) {
				t.Errorf("%d bytes%s: err %v, want too large %v", n, q, err, n > max)
			}
		}
		srv.Close()
	}
}

// TestClientBoundsAnUnaskedStream: an answer that calls itself an event
// stream is left unbounded only when the request asked for one; then a
// 1.0 upstream's events are bounded one by one.
func TestClientBoundsAnUnaskedStream(t *testing.T) {
	const max = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		chunk := "data: " + strings.Repeat("x", max/2) + "\n\n"
		if r.URL.Path == "/json" { // one JSON value that goes on
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"1","result":{"id":"`)
			chunk = strings.Repeat("x", max/2)
		}
		for range 5 {
			_, _ = io.WriteString(w, chunk)
		}
	}))
	defer srv.Close()
	c, _ := NewClient(loopbackTransport(srv, max), srv.URL, switchboard.FrontCredentials{})
	for _, accept := range []string{"", "application/json", "text/event-stream"} {
		req, _ := http.NewRequest("POST", srv.URL, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if tooLarge := errors.Is(err, ErrTooLarge); tooLarge != (accept != "text/event-stream") {
			t.Errorf("Accept %q: err %v", accept, err)
		}
	}
	// A 1.0 upstream's call that is not a stream reads a bounded answer.
	tr := newJSONRPCTransport(srv.URL+"/json", c)
	if _, err := tr.GetTask(context.Background(), nil, &a2a.GetTaskRequest{ID: "t-1"}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("GetTask answered with an endless stream: %v, want ErrTooLarge", err)
	}
}

func TestClassify(t *testing.T) {
	bearer := switchboard.FrontCredentials{Bearer: "x"}
	tests := []struct {
		name  string
		err   error
		obs   *observation
		creds switchboard.FrontCredentials
		want  string
	}{
		{"401 with a bearer", errors.New("401"), &observation{status: 401, bearer: true}, bearer, switchboard.FrontAuthRejected},
		{"401 without", errors.New("401"), &observation{status: 401}, switchboard.FrontCredentials{}, switchboard.FrontAuthMissing},
		{"access redirect", ErrRedirected, &observation{status: 302, access: true}, switchboard.FrontCredentials{}, switchboard.FrontAccessMissing},
		{"access 403 with headers", errors.New("403"), &observation{status: 403, access: true}, switchboard.FrontCredentials{Headers: map[string]string{"a": "b"}}, switchboard.FrontAccessRejected},
		{"redirect", ErrRedirected, &observation{status: 307}, bearer, switchboard.FrontRedirected},
		{"tunnel", errors.New("530"), &observation{status: 530}, bearer, switchboard.FrontTunnelDown},
		{"5xx html", errors.New("502"), &observation{status: 502}, bearer, switchboard.FrontUnavailable},
		{"no answer", errors.New("dial tcp: refused"), &observation{}, bearer, switchboard.FrontNetwork},
		{"too large", ErrTooLarge, &observation{status: 200, jsonRPC: true}, bearer, switchboard.FrontTooLarge},
		{"guard", netguard.ErrRefused, &observation{}, bearer, switchboard.FrontMisconfigured},
		{"guard over gRPC", errors.New("rpc error: code = Unavailable desc = connection error: dial tcp: " + netguard.ErrRefused.Error()), &observation{}, bearer, switchboard.FrontMisconfigured},
		{"gRPC unauthenticated", a2a.NewError(a2a.ErrUnauthenticated, "no"), &observation{}, bearer, switchboard.FrontAuthRejected},
		{"gRPC unauthenticated without", a2a.NewError(a2a.ErrUnauthenticated, "no"), &observation{}, switchboard.FrontCredentials{}, switchboard.FrontAuthMissing},
		{"garbage", errors.New("bad json"), &observation{status: 200}, bearer, switchboard.FrontUnexpected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := classify(tt.err, tt.obs, tt.creds); got != tt.want {
				t.Fatalf("classify = %s, want %s", got, tt.want)
			}
			if msg := peerMessage(tt.want); strings.Contains(msg, "401") || msg == "" {
				t.Fatalf("peer message %q", msg)
			}
		})
	}
}
