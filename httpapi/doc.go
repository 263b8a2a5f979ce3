// Package httpapi is what every HTTP face of Switchboard shares: the
// Server the faces mount their routes on (Mount; Routes is the whole
// table, with the access each route requires), health and readiness,
// /metrics, the bounds on request bodies, the count of requests; Env, with
// who a caller is (the owner-token check, an owner or agent token), the
// answers every face gives the same way (errors, JSON, addresses, the
// audit record); and the listener that bounds unauthenticated
// connections. The faces are packages of their own: a2aedge (with a2abind
// and a2arpc), ownerhttp, oauthhttp, agenthttp; package server assembles
// them (server/faces.go).
//
// Errors are switchboard.Error values until they reach the faces, where
// one table (codes, in error.go; Translate) turns each code into an HTTP
// status, a JSON-RPC error code and an A2A ErrorInfo reason.
package httpapi
