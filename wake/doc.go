// Package wake sends wake webhooks: the request that tells an agent that
// sleeps that work is waiting in its inbox. It renders a queued
// switchboard.Wake in the shape of the configuration's preset (generic,
// claude-code, openclaw-wake, openclaw-agent, hermes, grok-bot) and posts
// it through the network guard's client. Peer-written text in a wake is
// redacted, trimmed and marked untrusted; openclaw-wake carries none at all.
// docs/agents.md describes what each preset's receiver gets.
package wake
