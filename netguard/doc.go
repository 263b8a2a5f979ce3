// Package netguard makes the one HTTP client Switchboard uses for every
// request to an address it did not choose (webhook deliveries, pushes,
// wakes): a client that refuses private, loopback, link-local, metadata and
// other special-purpose addresses. The check runs on the address actually
// dialed, after DNS resolution, so a public name that resolves to a private
// address, DNS rebinding, and redirects to private addresses are all
// refused before a packet is sent.
package netguard
