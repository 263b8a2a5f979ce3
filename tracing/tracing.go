package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// DefaultSampleRatio is Config.SampleRatio's default: every trace that
// starts here is kept, as OpenTelemetry's own default sampler
// (parentbased_always_on) does; a peer's sampling decision is followed.
const DefaultSampleRatio = 1.0

// TracesPath is what Open appends to the endpoint's path, as the
// OpenTelemetry convention for OTEL_EXPORTER_OTLP_ENDPOINT says.
const TracesPath = "/v1/traces"

// Config says where spans go. The zero value is tracing off.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL (http://collector:4318); spans
	// are posted to its path + TracesPath. Empty: tracing off.
	Endpoint string
	// SampleRatio is the share of the traces that start here which are
	// kept, from 0 to 1. A trace continued from a peer's or a
	// stored traceparent keeps its parent's decision.
	SampleRatio float64
	// ServiceName and InstanceID name the process on every span
	// (service.name, service.instance.id).
	ServiceName string
	InstanceID  string
	// Version is service.version.
	Version string
	// BatchTimeout is how long spans wait to be sent together (0: the
	// SDK's default, 5 s). Tests shorten it.
	BatchTimeout time.Duration
}

// Tracer starts Switchboard's spans and exports them. A nil *Tracer is
// tracing off.
type Tracer struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// Open returns the tracer cfg describes: nil (tracing off) when
// cfg.Endpoint is empty. Nothing is sent until a span ends; an endpoint
// that is down costs the spans it loses, never a request.
func Open(cfg Config) (*Tracer, error) {
	if cfg.Endpoint == "" {
		return nil, nil
	}
	if cfg.SampleRatio < 0 || cfg.SampleRatio > 1 {
		return nil, fmt.Errorf("trace sample ratio %g: want a share from 0 to 1", cfg.SampleRatio)
	}
	endpoint, err := TracesURL(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("open the OTLP exporter: %w", err)
	}
	name := cfg.ServiceName
	if name == "" {
		name = "switchboard"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if cfg.InstanceID != "" {
		attrs = append(attrs, attribute.String("service.instance.id", cfg.InstanceID))
	}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	var batch []sdktrace.BatchSpanProcessorOption
	if cfg.BatchTimeout > 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(cfg.BatchTimeout))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, batch...),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
	)
	return &Tracer{tracer: tp.Tracer("github.com/switchboard-dev/switchboard"), provider: tp}, nil
}

// TracesURL returns the URL spans are posted to for the OTLP/HTTP base URL
// endpoint: its path with TracesPath appended. It refuses anything but an
// absolute http or https URL.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not repeated: it may hold a credential.
		return "", errors.New("OTLP endpoint: want an http:// or https:// URL such as http://collector:4318")
	}
	u.Path = strings.TrimRight(u.Path, "/") + TracesPath
	return u.String(), nil
}

// Close sends the spans still waiting and stops the exporter, within ctx.
// It is safe on a nil Tracer.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("send the last spans: %w", err)
	}
	return nil
}

// On reports whether spans are recorded at all (t is not nil).
func (t *Tracer) On() bool { return t != nil }

// noSpan is the span of tracing off: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts a span, a child of ctx's span if it has one, with the
// attribute key = value when key is not empty (an id: never a peer's
// text). With tracing off it returns ctx and a span that records nothing,
// and allocates nothing.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind, key, value string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind), withAttribute(key, value))
}

// withAttribute is the start option that sets key = value, if key is set.
func withAttribute(key, value string) trace.SpanStartOption {
	if key == "" {
		return trace.WithAttributes()
	}
	return trace.WithAttributes(attribute.String(key, value))
}

// StartFrom starts a span whose parent is traceparent, a W3C trace
// context carried with the work (a stored delivery, a connector frame),
// with the attribute key = value as Start. Without a valid traceparent it
// starts none: work that came without a trace stays out of traces rather
// than starting one of its own.
func (t *Tracer) StartFrom(ctx context.Context, traceparent, name string, kind trace.SpanKind, key, value string) (context.Context, trace.Span) {
	if t == nil || traceparent == "" {
		return ctx, noSpan
	}
	pctx := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
	if !trace.SpanContextFromContext(pctx).IsValid() {
		return ctx, noSpan
	}
	return t.tracer.Start(pctx, name, trace.WithSpanKind(kind), withAttribute(key, value))
}

// StartServer starts the server span of an inbound request, continuing
// the trace its traceparent header names, with the attribute key = value
// as Start. A missing or malformed header starts a new trace; it is never
// an error.
func (t *Tracer) StartServer(r *http.Request, name, key, value string) (context.Context, trace.Span) {
	if t == nil {
		return r.Context(), noSpan
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), withAttribute(key, value))
}

// Traceparent returns the W3C traceparent of ctx's span, to carry with the
// work it causes; "" with tracing off or without a span.
func (t *Tracer) Traceparent(ctx context.Context) string {
	if t == nil {
		return ""
	}
	return Format(trace.SpanContextFromContext(ctx))
}

// Format returns sc as a W3C traceparent ("" when sc is not valid).
func Format(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	// The flags version 00 defines: sampled (01) and random (02).
	flags := [2]byte{'0', '0' + byte(sc.TraceFlags()&(trace.FlagsSampled|trace.FlagsRandom))}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + string(flags[:])
}

// WithTraceparent returns ctx carrying traceparent, a W3C trace context
// stored with queued work, as its remote parent, for Inject; ctx as it is
// when traceparent is empty or malformed.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// Inject sets the traceparent header of an outbound request from ctx's
// span or remote parent (WithTraceparent); nothing without one.
func Inject(ctx context.Context, h http.Header) {
	SetHeader(h, Format(trace.SpanContextFromContext(ctx)))
}

// SetHeader sets the traceparent header of an outbound request (nothing
// when traceparent is empty).
func SetHeader(h http.Header, traceparent string) {
	if traceparent != "" {
		h.Set("Traceparent", traceparent)
	}
}

// Fail marks span failed with err's error code (switchboard.ErrorCode):
// never its message, which may quote what a peer sent.
func Fail(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, string(switchboard.ErrorCode(err)))
	}
}
