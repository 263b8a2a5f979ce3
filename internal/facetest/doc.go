// Package facetest runs a whole HTTP API for the tests of its faces
// (a2aedge, a2abind, ownerhttp, oauthhttp, agenthttp, httpapi) and of the
// assembly (server): New assembles it with server.NewAPI on SQLite in a
// temporary directory, the in-process bus and a loopback httptest server,
// and the Harness's methods make accounts, agents and tokens in its store
// and send it requests (Do, Owner, Call, Stream) whose answers come back
// as a Response or a channel of Events.
//
// It is for external test packages (package x_test) only: it imports
// testing and the assembly, so no package of the server may import it.
// TestOnlyTestsImportFacetest checks that none does.
package facetest
