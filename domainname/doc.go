// Package domainname reads and checks public host names: the domains an
// agent is served at (docs/agents.md, "Agent domains") and the
// deployment's own (serve --domain, deploy --domain). Parse turns what
// someone typed into the form a domain is held in, or says what is wrong
// with it; Normalize is Parse for an agent's domain, refused as the owner
// API refuses; Host reads a request's Host header the same way, so that a
// request finds its agent by the same name.
package domainname
