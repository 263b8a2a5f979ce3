// Package outpeer keeps agents' synced aliases and talks to the remote A2A
// agents they name. An owner uploads an alias of its client config
// (switchboard peers sync: alias, URL, peer token) for one agent; the MCP
// tools, which have no client config, then send to it and poll what they
// sent. The token is sealed at rest (sqlstore) and goes only to the
// alias's origin, through the network guard, with bounded answers and no
// redirects (front's client). Text the remote agents write is untrusted.
package outpeer
