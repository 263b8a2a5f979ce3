// Package reach checks how the world reaches the deployment's public
// addresses (docs/deploying.md, "Is it reachable?"): for a host name, its
// DNS (the A and AAAA records, and for an agent's domain whether they
// point at this server), the certificate served for it over TLS (trusted,
// for the name, days left, issuer), and a page fetched through it over
// that same connection (an agent's card, or /healthz for a name of the
// deployment), as a peer on the internet would see them.
//
// A Checker runs the checks with a bound on their time, and keeps each
// result about a minute, so that however often the console and
// `switchboard status` ask, a name is looked up and dialed at most once
// per minute. It dials only addresses its network guard allows (package
// netguard): a name that resolves to a private address is reported as one
// peers cannot reach, unless the operator opened the guard (serve
// --allow-private-networks, and tests).
package reach
