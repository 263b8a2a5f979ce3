// Package httpapi serves Switchboard over HTTP: each agent's public address
// (agent cards, a landing page, and A2A JSON-RPC 1.0 and 0.3 on one
// endpoint, with SSE streams), the owner API that manages accounts, agents,
// peer tokens and inbox replies, and health checks.
//
// Errors are switchboard.Error values until they reach this package, where
// one table (codes, in error.go) turns each code into an HTTP status, a
// JSON-RPC error code and an A2A ErrorInfo reason.
package httpapi
