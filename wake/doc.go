// Package wake wakes agents that sleep: the request that tells an inbox
// agent that work is waiting for it.
//
// The store queues a wake in the transaction of the message that causes
// it (or of the push that reports on a task the agent sent), merged per
// conversation while it waits for its debounce. Service holds an agent's
// wake configuration (config.go: presets, defaults, checks), queues the
// wakes no task change causes, sends a test wake, and runs the sender
// (queue.go, on the jobs runner): each due wake is claimed once across
// instances, posted, and recorded as sent, retried after 429 or 503 with
// backoff, failed, or dropped.
//
// Sender is the Waker that goes over the network: it renders a wake in the
// shape of its preset (render.go, template.go: generic, claude-code,
// openclaw-wake, openclaw-agent, hermes, grok-bot) and posts it through the
// network guard's client. Peer-written text in a wake is redacted and
// trimmed (package redact) and marked untrusted; openclaw-wake carries
// none at all. docs/agents.md describes what each preset's receiver gets.
package wake
