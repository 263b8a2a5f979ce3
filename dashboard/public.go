package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// Bounds of the health page's public addresses: the agents' domains it
// checks (by handle; `switchboard status --agent` checks any other), and
// how long it waits for the checks (each is bounded too; results are
// reused for a minute).
const (
	maxPublicDomains = 50
	publicWait       = 10 * time.Second
)

// publicRow is one public address on the health page.
type publicRow struct {
	URL, Kind, Agent string
	State, Problem   string
	DNS, Certificate string
	Page             string // "card ok", "health ok", ...
	CheckedAt        string
}

// publicBody is the health page's section on public addresses: the
// deployment's names, and the agents' domains the viewer may see.
type publicBody struct {
	Rows []publicRow
	// More counts the agents' domains left out (maxPublicDomains).
	More int
	// Checked says whether the deployment has public addresses to check
	// (an https public URL on a domain name).
	Checked bool
}

// readPublic checks the deployment's names and the domains of the
// viewer's agents (every agent's for the operator).
func (c *Console) readPublic(r *http.Request, v *viewer) (*publicBody, error) {
	body := &publicBody{}
	if c.Reach == nil {
		return body, nil
	}
	targets := c.Reach.DeploymentTargets()
	if len(targets) == 0 {
		return body, nil
	}
	body.Checked = true
	var f switchboard.AgentFilter
	if !v.account.IsOperator() {
		f.AccountID = &v.account.ID
	}
	agents, err := c.Agents.FindAgents(r.Context(), f)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, g := range agents {
		if g.Domain == "" {
			continue
		}
		if n++; n > maxPublicDomains {
			body.More++
			continue
		}
		for _, t := range c.Reach.AgentTargets(g) {
			if t.Name == g.Domain {
				targets = append(targets, t)
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), publicWait)
	defer cancel()
	for _, res := range c.Reach.CheckAll(ctx, targets) {
		body.Rows = append(body.Rows, publicRowOf(res))
	}
	return body, nil
}

// publicRowOf is res as the page shows it.
func publicRowOf(res ownerapi.Reachability) publicRow {
	row := publicRow{URL: res.URL, Kind: res.Kind, Agent: res.Agent, State: res.State, Problem: res.Problem,
		CheckedAt: formatTime(res.CheckedAt)}
	row.DNS = checkWord(res.DNS.State)
	if len(res.DNS.Addresses) > 0 {
		row.DNS += " (" + strings.Join(res.DNS.Addresses, ", ") + ")"
	}
	row.Certificate = checkWord(res.Certificate.State)
	if d := res.Certificate.DaysLeft; d != nil && *d >= 0 {
		row.Certificate += fmt.Sprintf(", %d days left", *d)
	}
	if res.Certificate.Issuer != "" {
		row.Certificate += ", by " + res.Certificate.Issuer
	}
	page, f := "card", res.Card
	if f == nil {
		page, f = "health", res.Health
	}
	row.Page = page + " failing"
	if f != nil {
		row.Page = page + " " + checkWord(f.State)
		if f.Status != 0 && f.Status != http.StatusOK {
			row.Page += fmt.Sprintf(" (HTTP %d)", f.Status)
		}
	}
	return row
}

// checkWord is a check's state as the page says it.
func checkWord(state string) string {
	if state == ownerapi.ReachNotChecked {
		return "not checked"
	}
	return state
}
