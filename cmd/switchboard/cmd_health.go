package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// HealthCmd asks a server whether it is ready (GET /readyz: its store
// answers) and exits 0 when it is, 1 when not: the health check of a
// container or a load balancer script, with nothing else installed. With
// HTTPS it prints how each name's certificate stands, which does not
// change the exit status.
type HealthCmd struct {
	Timeout time.Duration `name:"timeout" default:"5s" help:"How long to wait for the answer."`
	Live    bool          `name:"live" help:"Ask /healthz instead (the process answers at all), not /readyz."`
}

// Run asks and prints the answer.
func (c *HealthCmd) Run(ctx context.Context, cli *CLI) error {
	path := "/readyz"
	if c.Live {
		path = "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	url := strings.TrimRight(cli.serverURL(), "/") + path
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var ready ownerapi.Ready
	if c.Live || json.Unmarshal(body, &ready) != nil || ready.Status == "" {
		fmt.Fprintf(cli.out, "%s\n", strings.TrimSpace(string(body)))
		return nil
	}
	fmt.Fprintf(cli.out, "ok: %s, version %s\n", ready.Status, ready.Version)
	printTLS(cli.out, ready.TLS, time.Now())
	return nil
}

// printTLS prints the state of each name's certificate, a line each, and
// for a failure its cause and fix.
func printTLS(w io.Writer, names map[string]ownerapi.TLSName, now time.Time) {
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t := names[name]
		line := fmt.Sprintf("tls %s: %s (%s)", name, t.State, t.Source)
		if t.Expires != nil {
			line += fmt.Sprintf(", expires %s (in %s)", t.Expires.Format(time.RFC3339), t.Expires.Sub(now).Round(time.Minute))
		}
		fmt.Fprintln(w, line)
		if t.Cause != "" {
			fmt.Fprintf(w, "  last failure (%s): %s\n  fix: %s\n", t.Reason, t.Cause, t.Fix)
		}
	}
}
