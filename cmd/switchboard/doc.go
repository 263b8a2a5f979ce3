// Command switchboard runs a Switchboard deployment (serve) and manages one
// from the command line (accounts, agents, tokens, the inbox).
package main
