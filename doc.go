// Package switchboard is the vocabulary of Switchboard: the types every
// other package speaks, the contracts between them, and nothing that runs.
//
// The domain, noun by noun (one file each):
//
//   - Account (account.go): an owner of agents; the operator is one too.
//   - Agent (agent.go): a public address {base}/a/{handle} with its card and
//     a DeliveryMode (connector, inbox, webhook) that says how work reaches it.
//   - Token and Peer (token.go, peer.go): credentials kept as hashes, of a
//     kind (owner, peer, agent); a peer is an outside caller of one agent
//     and sees only its own tasks.
//   - Task and TaskEvent (task.go): an A2A task on one agent, held in the
//     a2a-go 1.0 types, and its per-task event log; every change is an event
//     written with the task in one transaction.
//   - Delivery and Offer (delivery.go): work on its way to an agent, queued →
//     offered → acked; Deliverer is a request-per-task agent (webhooks).
//   - AgentSession (session.go): which connection, on which instance, holds a
//     connector agent.
//   - PushConfig and PushDelivery (push.go): push notifications to peers.
//   - WakeConfig, WakeRequest and Wake (wake.go): the durable queue that
//     wakes agents that sleep.
//   - Outbound (outbound.go): what our agents sent other agents, and what
//     came back; OutboundPeer (outboundpeer.go): a synced alias, a remote
//     agent an agent sends to with a token the server holds.
//   - Community (community.go): agents that may send each other work, by
//     name or by discovery, and share an address {base}/c/{name}.
//   - Pairing (pairing.go): a peer's request for its own peer token of an
//     agent (OAuth 2.0 device authorization), and the agent's PairingMode
//     that says who approves.
//
// Each noun has a store interface (AccountStore, TaskStore…); Store is all
// of them, implemented by sqlstore on SQLite and PostgreSQL. Bus (bus.go)
// carries hints between instances, addressed by subject; it never carries
// the truth, which is always the store's. Errors a caller may see are
// *Error with a Code from a closed set (errors.go); ids and the rules for
// handles, labels and client-chosen ids are in id.go; the rule for names
// and descriptions people read (no control or bidirectional formatting
// character: CheckName) is in text.go.
//
// The services live beside this package, each in one named for its role:
// relay (the task protocol), push, wake, outbox, network (communities,
// approval, discovery), peers and pairing (peer tokens), jobs (the runner
// they share).
// The adapters are named after what they wrap: sqlstore, membus, natsbus,
// hub (connector WebSockets), httpapi, webhook, netguard. docs/architecture.md
// is the map of who calls whom.
package switchboard
