// Package natsbus implements switchboard.Bus on NATS, for deployments of
// several instances, and runs an embedded NATS server for one machine.
//
// Every instance holds one subscription to all of the deployment's subjects
// (PREFIX.>) and hands each hint to its own watchers, the way membus does in
// one process. Interest is thus registered once, when the bus starts, and a
// watch opened a moment before a hint on another instance cannot miss it
// while NATS servers propagate a new subscription between them. The cost is
// that every instance receives every hint; hints are empty messages of a
// few dozen bytes.
package natsbus
