// Package relay is the task protocol: it accepts a peer's messages to an
// agent's address, routes the work to the agent and carries the agent's
// answers back.
//
// Service is written only against the root package's interfaces (the
// store and the bus), so it is the same code on one instance and on many.
// What a peer does: SendMessage and SendMessageAndWait (service.go, wait.go),
// GetTask, CancelTask, ListTasks (list.go), push configurations
// (pushconfig.go), and following a task's events (follow.go). What an
// agent does: ConnectAgent, ClaimOffers, AckOffer, ApplyAgentEvent
// (agent.go); a new task offered to a connection on this instance as it is
// created (direct.go); an owner's reply (reply.go). Blocking calls wait on
// the task's log, and a turn that ends on this instance is handed to them
// in memory (turns.go). Background work: the sweeper (sweep.go: leases and
// deadlines), the webhook dispatcher (dispatch.go, on the jobs runner) and
// the retention of finished tasks (expire.go).
package relay
