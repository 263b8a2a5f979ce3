// Package outbox keeps what our agents send to other A2A agents and what
// comes back: the record behind `switchboard outbox` and `poll`, and the
// pushes other agents send to an agent's address about the tasks it sent.
//
// A record is written before its message is sent (record.go holds how a
// record takes in a remote task, an event or a message, and the bounds on
// what it keeps). Service records sends, polls and pushes; a push that
// changes a record queues an outbound_update wake in the same transaction.
// history.go puts an agent's conversation together from both directions:
// the tasks peers sent it and the records of what it sent.
package outbox
