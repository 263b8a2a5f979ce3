// Package a2arpc is A2A's JSON-RPC 2.0 wire: the request envelope and its
// checks, the A2A-Version header, error objects with the code, status and
// ErrorInfo each switchboard.Error code maps to (httpapi.Translate),
// results (A2A 1.0's encoded in one pass, package a2ajson), and the SSE
// framing of streams.
package a2arpc
