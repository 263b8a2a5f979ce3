// Package connector is the agent's side of the Switchboard connector
// protocol (docs/connector-protocol.md): an agent holds one outbound
// WebSocket to its Switchboard server, receives the tasks sent to its public
// A2A address on it, and reports progress and results on the same socket.
// Nothing listens on the agent's side, so it works behind NAT, on a laptop,
// in a CLI.
//
// A Client dials, says hello, and queues every task it is offered: a task
// that waits its turn is acknowledged as still submitted and reported
// working only when one of its MaxConcurrent workers starts the Handler on
// it; a task that an idle worker takes at once is acknowledged as working
// (one report fewer). At most QueueSize tasks are acknowledged ahead of the
// workers; further offers are left unanswered until the queue has room, so
// that the work waits at the server. Queued work costs no goroutine.
//
// The Client reconnects by itself with jittered exponential backoff and
// stops only when its context ends or the server says the agent can no
// longer connect (token revoked, agent deleted). Delivery is at least
// once: the Client de-duplicates tasks by
// task and message id, so a handler never runs twice for the same message
// while the Client runs. It remembers a task for an hour after its last
// work ended (the server's default delivery deadline), and at most the
// 200,000 it finished last (about 70 MB; at 1,000 tasks a second, the last
// 200 seconds, far longer than an unacknowledged offer takes to come back).
//
//	c := &connector.Client{
//		URLs:  []string{"https://sb.example"},
//		Token: os.Getenv("SWITCHBOARD_AGENT_TOKEN"),
//		Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) {
//			// w.Text() is untrusted peer input.
//			_ = w.Reply(strings.ToUpper(w.Text()))
//		}),
//	}
//	err := c.Run(ctx)
package connector
