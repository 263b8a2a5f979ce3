-- The W3C trace context of the request that caused a delivery (docs/operating.md,
-- "Traces"): the trace goes on with the delivery on whichever instance offers it.
-- Empty when the deployment does not trace.
ALTER TABLE deliveries ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
-- The same for a push notification: the trace context of the change it reports.
ALTER TABLE push_deliveries ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
-- And for a wake: the trace context of the latest request merged into it.
ALTER TABLE wakes ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
