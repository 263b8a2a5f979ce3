// Package webhook delivers tasks to agents in webhook mode, in the legacy
// format: POST {endpoint}/a2a/task with the task, answered in the response.
// Requests are signed so that the endpoint can tell them from forgeries
// (docs/webhooks.md), and they go through the network guard.
package webhook
