// Package jobs runs the work that Switchboard keeps queued in its store and
// does over the network: webhook deliveries, push notifications and wakes.
//
// Every kind of job goes through one loop, Runner: claim what is due (each
// job to one runner, on any instance, under a lease that outlasts the
// attempt), run it with a bound on how many run at once, let the job record
// its own outcome, and then wait for a hint on the bus, a finished job, or
// the poll, whichever comes first. The store is the truth: a lost hint
// delays a job by at most one poll, and a runner that dies mid-attempt
// leaves its job to be claimed again when the lease ends.
//
// A job that failed and is tried again waits as Backoff says, and a
// receiver's Retry-After (ParseRetryAfter) is honoured up to its cap.
package jobs
