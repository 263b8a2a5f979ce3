package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// WakeCmd groups the wake webhook commands.
type WakeCmd struct {
	Set   WakeSetCmd   `cmd:"" help:"Set (or change) the webhook that wakes an agent when work arrives in its inbox."`
	Show  WakeShowCmd  `cmd:"" help:"Show an agent's wake webhook (keys as fingerprints only) and its latest wakes."`
	Test  WakeTestCmd  `cmd:"" help:"Send one test wake now and show the receiver's answer."`
	Unset WakeUnsetCmd `cmd:"" help:"Remove an agent's wake webhook; pending wakes are dropped."`
}

// WakeSetCmd sets an agent's wake webhook. Flags left out keep their value.
// The key and the HMAC secret may come from the environment so that they
// are not on the command line (where other users of the machine can read
// them).
type WakeSetCmd struct {
	Agent        string         `name:"agent" required:"" help:"The agent (handle or id)."`
	URL          *string        `name:"url" env:"SWITCHBOARD_WAKE_URL" help:"The URL each wake is POSTed to (required the first time)."`
	Key          *string        `name:"key" env:"SWITCHBOARD_WAKE_KEY" help:"Bearer or API key sent with each wake (an empty value removes it). Prefer the environment variable."`
	HMACSecret   *string        `name:"hmac-secret" env:"SWITCHBOARD_WAKE_HMAC_SECRET" help:"Secret that signs each wake (X-Webhook-Signature-V2; required by hermes). Prefer the environment variable."`
	Preset       *string        `name:"preset" help:"generic (default), claude-code, openclaw-wake, openclaw-agent, hermes or grok-bot."`
	Debounce     *time.Duration `name:"debounce" help:"How long a conversation's wake waits for more messages (default 10s; 20s for claude-code)."`
	MaxPerHour   *int           `name:"max-per-hour" help:"Most wakes per hour (default 0: no cap; 25 for claude-code)."`
	KeyHeader    *string        `name:"key-header" help:"generic: the header the key goes in (default Authorization)."`
	KeyPrefix    *string        `name:"key-prefix" help:"generic: what precedes the key in that header (default \"Bearer \"; empty for none)."`
	BodyTemplate *string        `name:"body-template" help:"generic: a JSON body template with {{placeholders}} (docs/agents.md), or @FILE."`
	AgentID      *string        `name:"openclaw-agent-id" help:"openclaw presets: the agentId (default main)."`
	CLICommand   *string        `name:"cli-command" help:"How the woken agent runs this CLI, for the hint in each wake (default switchboard)."`
}

// Run sets the wake webhook.
func (c *WakeSetCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	body := ownerapi.WakeUpdate{URL: c.URL, Key: c.Key, HMACSecret: c.HMACSecret, Preset: c.Preset, MaxPerHour: c.MaxPerHour,
		KeyHeader: c.KeyHeader, KeyPrefix: c.KeyPrefix, OpenClawAgentID: c.AgentID, CLICommand: c.CLICommand}
	if c.Debounce != nil {
		seconds := c.Debounce.Seconds()
		body.DebounceSeconds = &seconds
	}
	if c.BodyTemplate != nil {
		tpl := *c.BodyTemplate
		if strings.HasPrefix(tpl, "@") {
			b, err := os.ReadFile(tpl[1:])
			if err != nil {
				return fmt.Errorf("--body-template: %w", err)
			}
			tpl = string(b)
		}
		body.BodyTemplate = &tpl
	}
	var w ownerapi.WakeConfig
	if printed, err := cl.call(ctx, "PUT", "/agents/"+pathEscape(c.Agent)+"/wake", body, &w); err != nil || printed {
		return err
	}
	printWake(cl, &w)
	fmt.Fprintf(cl.out, "next: switchboard wake test --agent %s\n", c.Agent)
	return nil
}

// WakeShowCmd shows an agent's wake webhook.
type WakeShowCmd struct {
	Agent string `name:"agent" required:"" help:"The agent (handle or id)."`
}

// Run shows the wake webhook.
func (c *WakeShowCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/agents/"+pathEscape(c.Agent)+"/wake", nil, func(cl *client, w *ownerapi.WakeConfig) error {
		printWake(cl, w)
		if len(w.Wakes) > 0 {
			fmt.Fprintln(cl.out, "\nlatest wakes:")
			tw := cl.table("STATE\tKIND\tCONTEXT\tTASKS\tDUE\tLAST")
			for _, x := range w.Wakes {
				last := x.LastError
				if x.LastStatus != 0 && last == "" {
					last = fmt.Sprintf("HTTP %d", x.LastStatus)
				}
				if x.Retries > 0 {
					last += fmt.Sprintf(" (%d retries)", x.Retries)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", x.State, x.Kind, x.ContextID, len(x.TaskIDs), x.DueAt.Format(time.RFC3339), last)
			}
			_ = tw.Flush()
		}
		return nil
	})
}

func printWake(cl *client, w *ownerapi.WakeConfig) {
	tw := cl.table("")
	fmt.Fprintf(tw, "agent\t%s\n", w.Agent)
	fmt.Fprintf(tw, "url\t%s  %s\n", w.URL, w.URLFingerprint)
	fmt.Fprintf(tw, "preset\t%s\n", w.Preset)
	fmt.Fprintf(tw, "key\t%s\n", w.Key)
	fmt.Fprintf(tw, "hmac secret\t%s\n", w.HMACSecret)
	fmt.Fprintf(tw, "debounce\t%s\n", time.Duration(w.DebounceSeconds*float64(time.Second)))
	limit := "none"
	if w.MaxPerHour > 0 {
		limit = fmt.Sprint(w.MaxPerHour)
	}
	fmt.Fprintf(tw, "max per hour\t%s\n", limit)
	switch w.Preset {
	case "generic":
		fmt.Fprintf(tw, "key header\t%s: %q + key\n", w.KeyHeader, w.KeyPrefix)
		if w.BodyTemplate != "" {
			fmt.Fprintf(tw, "body template\t%d bytes\n", len(w.BodyTemplate))
		}
	case "openclaw-wake", "openclaw-agent":
		fmt.Fprintf(tw, "openclaw agent\t%s\n", w.OpenClawAgentID)
	}
	fmt.Fprintf(tw, "cli command\t%s\n", w.CLICommand)
	if !w.Inbound {
		fmt.Fprintf(tw, "note\tthe agent is not in inbox mode: messages reach it directly, and only updates of tasks it sent wake it\n")
	}
	_ = tw.Flush()
}

// WakeTestCmd sends a test wake.
type WakeTestCmd struct {
	Agent string `name:"agent" required:"" help:"The agent (handle or id)."`
}

// Run sends the test wake and prints the answer. A receiver that answers
// with a status other than 2xx makes the command fail.
func (c *WakeTestCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "POST", "/agents/"+pathEscape(c.Agent)+"/wake/test", nil, func(cl *client, res *ownerapi.WakeTest) error {
		fmt.Fprintf(cl.out, "receiver answered HTTP %d\n", res.Status)
		if res.RetryAfter != "" {
			fmt.Fprintf(cl.out, "retry-after: %s\n", res.RetryAfter)
		}
		if res.Body != "" {
			fmt.Fprintf(cl.out, "body: %s\n", res.Body)
		}
		if !res.OK {
			return fmt.Errorf("the test wake was not accepted (HTTP %d)", res.Status)
		}
		return nil
	})
}

// WakeUnsetCmd removes an agent's wake webhook.
type WakeUnsetCmd struct {
	Agent string `name:"agent" required:"" help:"The agent (handle or id)."`
}

// Run removes the wake webhook.
func (c *WakeUnsetCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	if err := cl.do(ctx, "DELETE", "/agents/"+pathEscape(c.Agent)+"/wake", nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(cl.out, "removed the wake webhook of %s\n", c.Agent)
	return nil
}
