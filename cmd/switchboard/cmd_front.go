package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// FrontCmd groups the commands of front agents (docs/front.md).
type FrontCmd struct {
	Credentials FrontCredentialsCmd `cmd:"" help:"Set the credentials the front sends its upstream (replacing the ones kept): a bearer token read from stdin, and fixed headers. They are kept encrypted and never shown again."`
	Status      FrontStatusCmd      `cmd:"" help:"Show a front's upstream: its card, versions and auth needs, the credentials kept (names only), the last failure, and a leak check of the public card."`
	Verify      FrontVerifyCmd      `cmd:"" help:"Send an unknown method to the upstream through the real path and say what came back (reachable, upstream_auth_rejected, upstream_unavailable, network, ...)."`
}

// FrontCredentialsCmd sets a front's upstream credentials.
type FrontCredentialsCmd struct {
	Handle      string   `arg:"" help:"The front agent."`
	BearerStdin bool     `name:"bearer-stdin" help:"Read the upstream's bearer token from stdin (never from the command line, where other users see it)."`
	Header      []string `name:"header" placeholder:"NAME=VALUE" help:"A fixed header to send (repeatable), such as an access service's client id and secret."`
	Clear       bool     `name:"clear" help:"Remove every credential."`
}

// Run sets the credentials.
func (c *FrontCredentialsCmd) Run(ctx context.Context, cli *CLI) error {
	var body ownerapi.FrontCredentials
	switch {
	case c.Clear && (c.BearerStdin || len(c.Header) > 0):
		return fmt.Errorf("--clear excludes --bearer-stdin and --header")
	case !c.Clear && !c.BearerStdin && len(c.Header) == 0:
		return fmt.Errorf("say what to send: --bearer-stdin, --header NAME=VALUE, or --clear")
	}
	if c.BearerStdin {
		tok, err := readSecret(cli.stdin)
		if err != nil {
			return fmt.Errorf("read the bearer token from stdin: %w", err)
		}
		body.Bearer = tok
	}
	for _, h := range c.Header {
		k, v, ok := strings.Cut(h, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("--header %q: want NAME=VALUE", h)
		}
		if body.Headers == nil {
			body.Headers = map[string]string{}
		}
		body.Headers[strings.TrimSpace(k)] = v
	}
	return ownerCall(ctx, cli, "PUT", "/agents/"+pathEscape(c.Handle)+"/upstream-credentials", body, func(cl *client, set *ownerapi.FrontCredentialsSet) error {
		fmt.Fprintf(cl.out, "front %s: bearer %s, headers [%s]\n", c.Handle, yesNo(set.Bearer), strings.Join(set.Headers, ", "))
		fmt.Fprintf(cl.out, "next: check the path with  switchboard front verify %s\n", c.Handle)
		return nil
	})
}

func yesNo(b bool) string {
	if b {
		return "set"
	}
	return "none"
}

// FrontStatusCmd shows a front's status.
type FrontStatusCmd struct {
	Handle string `arg:"" help:"The front agent."`
}

// Run shows the status.
func (c *FrontStatusCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/agents/"+pathEscape(c.Handle)+"/front", nil, func(cl *client, st *ownerapi.FrontStatus) error {
		tw := cl.table("")
		fmt.Fprintf(tw, "upstream\t%s\n", st.Upstream)
		fmt.Fprintf(tw, "record\t%s\n", st.Record)
		if len(st.GivesUp) > 0 {
			fmt.Fprintf(tw, "gives up\t%s\n", strings.Join(st.GivesUp, "; "))
		}
		if st.UpstreamCardURL != "" {
			fmt.Fprintf(tw, "card url\t%s\n", st.UpstreamCardURL)
		}
		if !st.UpstreamValid {
			fmt.Fprintf(tw, "upstream problem\t%s\n", st.UpstreamProblem)
		}
		card := st.Card
		if st.CardProblem != "" {
			card += ": " + st.CardProblem
		}
		fmt.Fprintf(tw, "card\t%s\n", card)
		fmt.Fprintf(tw, "versions\t%s\n", strings.Join(st.UpstreamVersions, ", "))
		if st.UpstreamBinding != "" {
			fmt.Fprintf(tw, "binding\t%s\n", st.UpstreamBinding)
		}
		fmt.Fprintf(tw, "streaming\t%v\n", st.UpstreamStreaming)
		fmt.Fprintf(tw, "upstream wants\t%s\n", describeUpstreamAuth(st.UpstreamAuth))
		fmt.Fprintf(tw, "credentials\tbearer %s, headers [%s]\n", yesNo(st.HasBearer), strings.Join(st.CredentialHeaders, ", "))
		if f := st.LastFailure; f != nil {
			fmt.Fprintf(tw, "last failure\t%s %s (status %d, %s, peer %q): %s\n", f.At.Format("2006-01-02 15:04:05Z07:00"), f.Reason, f.Status, f.Method, f.Peer, f.Detail)
		} else {
			fmt.Fprintf(tw, "last failure\tnone\n")
		}
		if len(st.PublicCardLeaks) > 0 {
			fmt.Fprintf(tw, "public card leaks\t%s\n", strings.Join(st.PublicCardLeaks, "; "))
		} else {
			fmt.Fprintf(tw, "public card leaks\tnone\n")
		}
		return tw.Flush()
	})
}

// describeUpstreamAuth says what the upstream's card asks of callers.
func describeUpstreamAuth(a ownerapi.UpstreamAuth) string {
	s := "unknown (its card does not say)"
	if a.Bearer != nil {
		s = "no credential"
		if *a.Bearer {
			s = "a bearer token"
		}
	}
	if len(a.Schemes) > 0 {
		s += " (" + strings.Join(a.Schemes, ", ") + ")"
	}
	if len(a.Unsupported) > 0 {
		s += "; unsupported: " + strings.Join(a.Unsupported, ", ")
	}
	return s
}

// FrontVerifyCmd checks the path to a front's upstream.
type FrontVerifyCmd struct {
	Handle string `arg:"" help:"The front agent."`
}

// Run checks the path; it fails unless the upstream is reachable.
func (c *FrontVerifyCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var v ownerapi.FrontVerification
	if printed, err := cl.call(ctx, "POST", "/agents/"+pathEscape(c.Handle)+"/front/verify", nil, &v); err != nil || printed {
		if err == nil && !v.OK {
			return fmt.Errorf("front %s: the upstream is not reachable: %s", c.Handle, v.Reason)
		}
		return err
	}
	sent := "no credential"
	if v.Sent.Bearer || len(v.Sent.Headers) > 0 {
		sent = fmt.Sprintf("bearer %v, headers [%s]", v.Sent.Bearer, strings.Join(v.Sent.Headers, ", "))
	}
	switch {
	case v.OK && v.Method == "GetTask":
		binding := v.Binding
		if binding == "" {
			binding = "HTTP+JSON or gRPC"
		}
		fmt.Fprintf(cl.out, "front %s: reachable (%s: task not found to GetTask of an unknown task, as expected; sent %s)\n", c.Handle, binding, sent)
		return nil
	case v.OK:
		fmt.Fprintf(cl.out, "front %s: reachable (HTTP %d, JSON-RPC error %d to the unknown method %s, as expected; sent %s)\n", c.Handle, v.Status, v.RPCErrorCode, v.Method, sent)
		return nil
	}
	return fmt.Errorf("front %s: %s (HTTP %d; sent %s): %s", c.Handle, v.Reason, v.Status, sent, v.Detail)
}
