// Package tracing owns Switchboard's OpenTelemetry traces: the tracer
// provider that exports spans over OTLP/HTTP (Open, Close), the spans the
// other packages start (Tracer), and the W3C trace context as it travels in
// headers, on stored deliveries and on the connector protocol
// (Traceparent, SetHeader, ValidTraceparent).
//
// A nil *Tracer is tracing off: every method is a no-op that allocates
// nothing, so a deployment without an OTLP endpoint pays one nil check per
// place a span would start. Spans carry ids, names, states and sizes, never
// a peer's text.
package tracing
