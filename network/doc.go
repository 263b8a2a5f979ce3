// Package network is the coordinator network: the rules that let agents
// of a deployment find each other and send each other work, written only
// against the root package's interfaces.
//
//   - Approval (approval.go): with RequireApproval, agents start outside
//     the network until the operator approves them; an unapproved agent is
//     never chosen, is not sent work by other agents, sends none and reads
//     no directory, and opens no part of the network to its owner.
//   - Communities (membership.go): owners put their agents in communities;
//     a closed one takes new members from the operator only. Two agents
//     that share a community may send each other work: membership is the
//     authorization, no peer token is needed.
//   - Discovery (discover.go): "someone in community C who can do S". The
//     store answers in one query (switchboard.CommunityStore.Discover):
//     approved, accepting tasks, reachable (live first, then within the
//     reconnect grace), in the community, offering the skill, not the
//     sender; the fewest unfinished tasks first, ties in turn (a
//     round-robin cursor per question, kept by this Service). Nobody
//     eligible is switchboard.ENOAGENT at once, saying which gate emptied
//     the list.
//   - Sending (send.go): by name (to a paused agent too: the work waits
//     for it, as at its address) or by discovery, through the task service
//     (Relay) as the peer the sending agent is (switchboard.PeerAgent), so
//     that delivery, waiting, following and pushes work as for any task.
//   - The directory (directory.go): who an agent or an owner can see, and
//     whether each is live now.
//
// Faces (httpapi, hub) call it; cmd/switchboard wires it with the store and
// the relay. docs/network.md is the user's account of the same rules.
package network
