package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// HealthCmd asks a server whether it is ready (GET /readyz: its store
// answers) and exits 0 when it is, 1 when not: the health check of a
// container or a load balancer script, with nothing else installed.
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
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(cli.out, "%s\n", strings.TrimSpace(string(body)))
	return nil
}
