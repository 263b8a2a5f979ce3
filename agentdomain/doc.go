// Package agentdomain reads and checks the host names agents are served
// at (docs/agents.md, "Agent domains"): Normalize turns what an owner
// typed into the form Agent.Domain holds, or says what is wrong with it;
// Host reads a request's Host header the same way, so that a request
// finds its agent by the same name.
package agentdomain
