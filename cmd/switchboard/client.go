package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/server"
)

// client calls the owner API of a server for the management commands.
type client struct {
	base  string
	token string
	http  *http.Client
	json  bool      // print raw JSON answers
	out   io.Writer // where answers are printed
	// tokenFile is where the token was read from, when it came from the
	// server's token file rather than a flag or the environment.
	tokenFile string
}

// newClient returns a client for the server and owner token the command
// line names. Without a token flag or variable it reads the token file that
// the server wrote in the data directory at first start, which works on the
// server's own machine.
func newClient(cli *CLI) (*client, error) {
	base := strings.TrimRight(cli.serverURL(), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server / SWITCHBOARD_URL must be an http(s) URL, got %q", cli.serverURL())
	}
	c := &client{base: base, token: strings.TrimSpace(cli.OwnerToken), http: &http.Client{Timeout: 60 * time.Second}, json: cli.JSON, out: cli.out}
	if c.token == "" {
		c.tokenFile = filepath.Join(cli.Data, server.OwnerTokenFile)
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("no owner token: set SWITCHBOARD_OWNER_TOKEN or --owner-token (could not read %s: %w)", c.tokenFile, errors.Unwrap(err))
		}
		c.token = strings.TrimSpace(string(b))
	}
	return c, nil
}

// apiError is an error answer of the owner API.
type apiError struct {
	Status  int
	Message string
}

// Error implements the error interface.
func (e *apiError) Error() string {
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when out is not nil). Non-2xx answers become *apiError.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.base+path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e ownerapi.Error
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		if e.Reason != "" {
			e.Error += ": " + e.Reason
		}
		if resp.StatusCode == http.StatusUnauthorized && c.tokenFile != "" {
			e.Error += fmt.Sprintf(" (the token was read from %s; if it was rotated, set SWITCHBOARD_OWNER_TOKEN)", c.tokenFile)
		}
		return &apiError{Status: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// printJSON prints v indented.
func (c *client) printJSON(v any) error {
	enc := json.NewEncoder(c.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// call runs a request and, with --json, prints its raw answer. It returns
// the answer decoded into out for the human-readable printers.
func (c *client) call(ctx context.Context, method, path string, body, out any) (printed bool, err error) {
	var raw json.RawMessage
	if err := c.do(ctx, method, path, body, &raw); err != nil {
		return false, err
	}
	if c.json {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, err
		}
		return true, c.printJSON(v)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return false, fmt.Errorf("decode answer: %w", err)
		}
	}
	return false, nil
}

// pathEscape escapes one path segment.
func pathEscape(s string) string { return url.PathEscape(s) }

// agentsNamed returns the handle given, or when it is empty the handles of
// all the owner's agents: what the commands that take an optional --agent
// go through.
func (c *client) agentsNamed(ctx context.Context, handle string) ([]string, error) {
	if handle != "" {
		return []string{handle}, nil
	}
	var all []ownerapi.Agent
	if err := c.do(ctx, "GET", "/agents", nil, &all); err != nil {
		return nil, err
	}
	handles := make([]string, 0, len(all))
	for _, g := range all {
		handles = append(handles, g.Handle)
	}
	return handles, nil
}
