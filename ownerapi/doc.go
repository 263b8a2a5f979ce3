// Package ownerapi is the JSON of the owner and operator API, shared by the
// HTTP handlers (package ownerhttp) and the CLI (cmd/switchboard), so that the
// two cannot drift.
//
// Each type is the body of a request or an answer, named for what it
// carries: Agent, Account, Token, WakeConfig, Task, Outbound, TaskPushes and
// the rest. Ids and states are plain strings, as on the wire; what is an
// A2A object on the wire (a task, a message, a skill) is the A2A SDK's
// type. Request bodies have pointer fields where the server must tell an
// absent field from an empty one (PATCH and PUT), and omit absent fields
// when encoded. The json tags are the wire format: changing one changes the
// API for every client, and ownerhttp's golden test
// (ownerhttp/ownerapi_golden_test.go) fails when an answer's keys or value
// types change.
//
// The package holds types only. It depends on the standard library and the
// A2A SDK's wire types, and on nothing that runs.
package ownerapi
