// Package push sends A2A push notifications to peers: the task as it stood
// after a change, POSTed to the URL of a push configuration in the wire
// shape of the protocol version the configuration was registered with
// (docs/push.md).
//
// Task changes queue the pushes in the store, in the change's transaction.
// Service claims them (on any instance, each push once, a configuration's
// pushes in order), sends each through a Pusher, records every attempt,
// retries with backoff and gives up past its limits; it runs on the jobs
// runner. Sender is the Pusher that goes over the network, through the
// network guard.
package push
