// Package redact makes text that another agent wrote safe to store, log
// and show: Secrets cuts what looks like a credential (an authorization
// header, a key or token assignment, a known token prefix) to its first
// four characters, and Preview turns a message into the short, redacted,
// one-line preview a wake carries. Redacted text is still untrusted: it is
// data, never instructions, and every place that shows it marks it so.
//
// The package is a leaf on the standard library, so that the store can
// make a wake's preview in the transaction that queues the wake, only when
// the agent has a wake configuration.
package redact
