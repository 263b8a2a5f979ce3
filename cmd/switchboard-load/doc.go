// Command switchboard-load measures a Switchboard deployment: it connects
// native connector agents, drives concurrent A2A peers against their public
// addresses, and prints throughput, latency percentiles and the server's
// memory. By default it starts its own server on a fresh SQLite data
// directory (and for the cross scenario two instances on PostgreSQL joined
// by embedded NATS), so that one command measures one machine; -server
// targets a running deployment instead. Every loop is bounded in count and
// time, and only loopback addresses are touched unless -server names
// another.
//
// Scenarios:
//
//	idle    hold -agents connected agents; report server memory per agent
//	route   peers → server → connector agents → answers (and the direct path)
//	inbox   SendMessage to inbox agents: stored, answered SUBMITTED
//	cross   peers on one instance, agents on another (and the same-instance path)
//	direct  the same peers against an a2a-go v2 reference server only
//	ceiling the same peers against a server that answers a fixed task, parsing
//	        nothing: what the peers and net/http alone carry here
//	session -agents/2 pairs of agents in live sessions, frames one way (with
//	        -instances 2: the two ends on different instances)
//
// With -server-cpus N the servers it starts run on the last N CPUs and the
// tool on the others, as a server on a machine of its own would run, so
// that the two sides do not share cores.
//
// See docs/performance.md for the numbers measured with it.
package main
