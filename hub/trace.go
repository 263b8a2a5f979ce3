package hub

import (
	"context"

	"github.com/switchboard-dev/switchboard"
	"go.opentelemetry.io/otel/trace"
)

// Traces. An offer continues the trace of the delivery it makes (the
// request that caused the work, Delivery.TraceParent): a span "hub offer"
// on the instance that holds the agent's socket, from the claim (or the
// direct offer) until the frame is queued for the socket. The offer's
// frame carries the offer span's context to the agent (connproto
// Frame.TraceParent), and the offer's delivery keeps it in the connection's
// in-flight map, so that the answer to the offer is a span "agent answer"
// below it; the agent's TaskUpdate reports carry it back the same way. A
// delivery without a trace context makes no span and sends none.

// startOffer starts the span of the offer of d, kind consumer when the
// work came through the store and the bus (a claim) and internal when it
// was offered as its task was created, and makes d carry the span's
// context. With tracing off, or a delivery without a trace, it changes
// nothing. d must not be shared with a reader yet.
func (c *conn) startOffer(d *switchboard.Delivery, claimed bool) trace.Span {
	if d.TraceParent == "" || !c.hub.Tracer.On() {
		return nil
	}
	kind := trace.SpanKindInternal
	if claimed {
		kind = trace.SpanKindConsumer
	}
	ctx, span := c.hub.Tracer.StartFrom(c.ctx, d.TraceParent, "hub offer", kind, "switchboard.delivery_id", d.ID)
	d.TraceParent = c.hub.Tracer.Traceparent(ctx)
	return span
}

// endSpan ends span, if there is one.
func endSpan(span trace.Span) {
	if span != nil {
		span.End()
	}
}

// startAnswer starts the span of the agent's answer to work whose trace
// context is traceparent (the offer's, from the in-flight delivery or the
// agent's frame), and returns the context the answer is recorded under.
func (c *conn) startAnswer(traceparent, taskID string) (context.Context, trace.Span) {
	if traceparent == "" || !c.hub.Tracer.On() {
		return c.ctx, nil
	}
	return c.hub.Tracer.StartFrom(c.ctx, traceparent, "agent answer", trace.SpanKindServer, "switchboard.task_id", taskID)
}

// startSend starts the server span of an agent's SendTask, continuing the
// trace its frame names (the agent's work's) or else starting one, and
// returns the context the send runs under: the receiver's delivery carries
// the span's context, so that its offer is below the send.
func (c *conn) startSend(traceparent string) (context.Context, trace.Span) {
	if !c.hub.Tracer.On() {
		return c.ctx, nil
	}
	if ctx, span := c.hub.Tracer.StartFrom(c.ctx, traceparent, "agent send", trace.SpanKindServer, "", ""); span.SpanContext().IsValid() {
		return ctx, span
	}
	return c.hub.Tracer.Start(c.ctx, "agent send", trace.SpanKindServer, "", "")
}
