// Command tckproxy is a reverse proxy that adds an Authorization header to
// every request that has none. The A2A 0.3 conformance suite (a2a-tck tag
// 0.3.0.beta4) cannot send credentials; this lets it test an address that
// requires a peer token. Streams pass through unbuffered.
//
//	tckproxy -listen 127.0.0.1:18091 -target http://127.0.0.1:18090 -token sbp_...
package main
