package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// readPublic reads how the world reaches the agent's public addresses
// (GET /agents/{ref}/reachability: DNS, certificate, card, checked by the
// server); none from a server that does not check them.
func readPublic(ctx context.Context, cl *client, agent string) ([]ownerapi.Reachability, error) {
	var r ownerapi.AgentReachability
	err := cl.do(ctx, "GET", "/agents/"+pathEscape(agent)+"/reachability", nil, &r)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil, nil
	}
	return r.Addresses, err
}

// printPublic prints a line per public address, and under one that has a
// problem, the problem and its fix.
func printPublic(tw io.Writer, addrs []ownerapi.Reachability) {
	for _, a := range addrs {
		fmt.Fprintf(tw, "public\t%s — %s\n", a.URL, reachLine(a))
		if a.Problem != "" {
			fmt.Fprintf(tw, "\t%s: %s\n", a.State, a.Problem)
		}
	}
}

// reachLine says how each check of a went, in a few words: "dns ok
// (203.0.113.5), certificate ok, 61 days left, card ok".
func reachLine(a ownerapi.Reachability) string {
	dns := "dns " + checkWord(a.DNS.State)
	if len(a.DNS.Addresses) > 0 {
		dns += " (" + strings.Join(a.DNS.Addresses, ", ") + ")"
	}
	cert := "certificate " + checkWord(a.Certificate.State)
	if d := a.Certificate.DaysLeft; d != nil && *d >= 0 {
		cert += fmt.Sprintf(", %d days left", *d)
	}
	page, f := "card", a.Card
	if f == nil {
		page, f = "health", a.Health
	}
	fetch := page + " failing"
	if f != nil {
		fetch = page + " " + checkWord(f.State)
		if f.Status != 0 && f.Status != http.StatusOK {
			fetch += fmt.Sprintf(" (HTTP %d)", f.Status)
		}
	}
	return dns + ", " + cert + ", " + fetch
}

// checkWord is a check's state as status prints it.
func checkWord(state string) string {
	if state == ownerapi.ReachNotChecked {
		return "not checked"
	}
	return state
}

// publicFailing returns the first public address peers cannot reach, or
// nil.
func publicFailing(s *agentStatus) *ownerapi.Reachability {
	for i := range s.Public {
		if s.Public[i].State == ownerapi.ReachFailing {
			return &s.Public[i]
		}
	}
	return nil
}
