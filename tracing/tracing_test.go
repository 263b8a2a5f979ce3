package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/tracing"
	"go.opentelemetry.io/otel/trace"
)

// openTracer returns a tracer that exports to a server that drops what
// it gets.
func openTracer(tb testing.TB, ratio float64) *tracing.Tracer {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	tb.Cleanup(srv.Close)
	tr, err := tracing.Open(tracing.Config{Endpoint: srv.URL, SampleRatio: ratio})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tr.Close(context.Background()) })
	return tr
}

func TestOffIsNil(t *testing.T) {
	tr, err := tracing.Open(tracing.Config{SampleRatio: 7}) // no endpoint: the ratio is not read
	if tr != nil || err != nil {
		t.Fatalf("Open without an endpoint = %v, %v; want nil, nil", tr, err)
	}
	ctx, span := tr.Start(context.Background(), "x", trace.SpanKindInternal, "k", "v")
	span.End()
	if got := tr.Traceparent(ctx); got != "" || span.IsRecording() {
		t.Fatalf("tracing off: traceparent %q, recording %v", got, span.IsRecording())
	}
}

func TestOpenRefuses(t *testing.T) {
	for _, c := range []tracing.Config{
		{Endpoint: "collector:4318", SampleRatio: 1},
		{Endpoint: "ftp://collector", SampleRatio: 1},
		{Endpoint: "http://", SampleRatio: 1},
		{Endpoint: "http://collector:4318", SampleRatio: 1.5},
		{Endpoint: "http://collector:4318", SampleRatio: -0.1},
	} {
		if tr, err := tracing.Open(c); err == nil {
			_ = tr.Close(context.Background())
			t.Errorf("Open(%+v) accepted", c)
		}
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":       "http://c:4318/v1/traces",
		"http://c:4318/":      "http://c:4318/v1/traces",
		"https://c/otlp":      "https://c/otlp/v1/traces",
		"https://c/otlp/?x=1": "https://c/otlp/v1/traces?x=1",
	} {
		if got, err := tracing.TracesURL(in); err != nil || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestStartFromContinues: a span started from a valid traceparent is its
// child in its trace; from a malformed one, none is started.
func TestStartFromContinues(t *testing.T) {
	tr := openTracer(t, 0) // ratio 0: only a sampled parent's traces are kept
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx, span := tr.StartFrom(context.Background(), parent, "x", trace.SpanKindInternal, "", "")
	defer span.End()
	got := tr.Traceparent(ctx)
	if !strings.HasPrefix(got, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || strings.Contains(got, "00f067aa0ba902b7") || !strings.HasSuffix(got, "-01") {
		t.Fatalf("child traceparent %q: want the parent's trace, a new span, sampled", got)
	}
	if !connproto.ValidTraceparent(got) {
		t.Fatalf("%q is not valid for connectors", got)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"} {
		ctx, span := tr.StartFrom(context.Background(), bad, "x", trace.SpanKindInternal, "", "")
		if span.IsRecording() || tr.Traceparent(ctx) != "" {
			t.Errorf("StartFrom(%q) started a span", bad)
		}
	}
	// Not sampled by the parent: not recorded, whatever the ratio.
	_, span2 := tr.StartFrom(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "x", trace.SpanKindInternal, "", "")
	if span2.IsRecording() {
		t.Fatal("a span below an unsampled parent is recorded")
	}
}

func TestValidTraceparent(t *testing.T) {
	for s, want := range map[string]bool{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":   true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00":   true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03":   true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-10":   false,
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01":   false,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":   false,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":   false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":   false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n": false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01":   false,
		"": false,
	} {
		if got := connproto.ValidTraceparent(s); got != want {
			t.Errorf("ValidTraceparent(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-not-a-trace-01")
	f.Fuzz(func(t *testing.T, s string) {
		if connproto.ValidTraceparent(s) {
			// What a connector passes on must round-trip through the SDK's
			// own reading unchanged.
			tr := tracing.WithTraceparent(context.Background(), s)
			h := http.Header{}
			tracing.Inject(tr, h)
			if h.Get("Traceparent") != s {
				t.Fatalf("valid %q reads back as %q", s, h.Get("Traceparent"))
			}
		}
	})
}

// BenchmarkSpan is the cost of one span as the routed path starts one:
// with tracing off (a nil Tracer) and on at ratio 1 (exported to a server
// that drops it).
func BenchmarkSpan(b *testing.B) {
	for name, tr := range map[string]*tracing.Tracer{"Off": nil, "On": openTracer(b, 1)} {
		b.Run(name, func(b *testing.B) {
			ctx, root := tr.Start(context.Background(), "root", trace.SpanKindServer, "", "")
			defer root.End()
			b.ReportAllocs()
			for b.Loop() {
				sctx, span := tr.Start(ctx, "store CreateTask", trace.SpanKindClient, "switchboard.task_id", "01a24466-9661-729a-a009-1907b9f86f07")
				_ = tr.Traceparent(sctx)
				span.End()
			}
		})
	}
}
