package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/promtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/metrics"
)

// scrape reads /metrics from url and parses it strictly.
func scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	facetest.Must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != metrics.ContentType {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s, err := promtest.Parse(resp.Body)
	facetest.Must(t, err)
	return s
}

func TestMetrics(t *testing.T) {
	reg := metrics.NewRegistry()
	h := facetest.New(t, facetest.WithDeps(func(d *assembly.APIDeps) { d.MetricsHandler = reg }))
	reg.MustRegister(h.API.Metrics()...)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")

	h.Send(g, tok, "m1", "hi")
	h.Call(h.Addr(g), tok, "tasks/get", map[string]any{"id": "nope"})
	h.Call(h.Addr(g), tok, "NoSuchMethod", map[string]any{})
	h.Call(h.Addr(g), "", "SendMessage", facetest.UserMessage("m2", "no token")) // refused before the method is read
	h.Do("GET", h.Server.URL+"/nothing-here", nil, "")
	h.Do("PUT", h.Server.URL+"/nothing-here", nil, "")

	s := scrape(t, h.Server.URL)
	for key, want := range map[string]float64{
		`switchboard_jsonrpc_requests_total{method="SendMessage"}`:   1,
		`switchboard_jsonrpc_requests_total{method="tasks/get"}`:     1,
		`switchboard_jsonrpc_requests_total{method="other"}`:         1,
		`switchboard_jsonrpc_requests_total{method="GetTask"}`:       0,
		`switchboard_http_requests_total{method="POST",code="2xx"}`:  3,
		`switchboard_http_requests_total{method="POST",code="4xx"}`:  1,
		`switchboard_http_requests_total{method="GET",code="4xx"}`:   1,
		`switchboard_http_requests_total{method="other",code="4xx"}`: 1,
		`switchboard_http_requests_total{method="GET",code="5xx"}`:   0,
		`switchboard_sse_streams`:                                    0,
	} {
		if got, ok := s[key]; !ok || got != want {
			t.Errorf("%s: got %v (present %v), want %v", key, got, ok, want)
		}
	}
	// The scrape itself is counted when it ends.
	if got := scrape(t, h.Server.URL)[`switchboard_http_requests_total{method="GET",code="2xx"}`]; got != 1 {
		t.Errorf("scrapes counted: got %v, want 1", got)
	}
}

func TestMetricsStreamGauge(t *testing.T) {
	reg := metrics.NewRegistry()
	h := facetest.New(t, facetest.WithDeps(func(d *assembly.APIDeps) { d.MetricsHandler = reg }))
	reg.MustRegister(h.API.Metrics()...)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	id := h.Send(g, tok, "m1", "hi")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + id + `"}}`
	req, err := http.NewRequestWithContext(ctx, "POST", h.Addr(g), strings.NewReader(body))
	facetest.Must(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	facetest.Must(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the snapshot is on its way: the stream is open
		t.Fatal(err)
	}
	if got := scrape(t, h.Server.URL)["switchboard_sse_streams"]; got != 1 {
		t.Fatalf("open streams: got %v, want 1", got)
	}
	cancel()
	testwait.For(t, "the stream to close", func() bool { return scrape(t, h.Server.URL)["switchboard_sse_streams"] == 0 })
}

func TestMetricsOffByDefault(t *testing.T) {
	h := facetest.New(t)
	if r := h.Do("GET", h.Server.URL+"/metrics", nil, ""); r.Status != http.StatusNotFound {
		t.Fatalf("/metrics without a handler: %d", r.Status)
	}
}

// TestTooLargeBodyClosesConnection: a body that turns out too large while
// it is read (chunked, no declared length) makes the server close the
// connection rather than read the rest, through the request counter's
// wrapper.
func TestTooLargeBodyClosesConnection(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxBody = 1024 }))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"`),
		strings.NewReader(strings.Repeat("a", 8<<10)), strings.NewReader(`"}}`))
	req, err := http.NewRequest("POST", h.Addr(g), body)
	facetest.Must(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	facetest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("got %d, close %v; want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// BenchmarkServeHealthz measures a whole request through Server.ServeHTTP,
// request counting included, without the network.
func BenchmarkServeHealthz(b *testing.B) {
	h := facetest.New(b)
	req := httptest.NewRequest("GET", "/healthz", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.API.ServeHTTP(httptest.NewRecorder(), req)
	}
}
