// Package front is the public front of an A2A server that already runs at an https URL: its card, rewritten and scrubbed for the public address, and the forwarding of peers' work to it with the owner's credentials.
package front
