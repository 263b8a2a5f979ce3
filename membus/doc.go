// Package membus implements switchboard.Bus inside one process: the
// single-binary default. Notify signals the watchers registered in the same
// process directly, the way a NATS bus delivers to the instances that
// subscribed to a subject.
package membus
