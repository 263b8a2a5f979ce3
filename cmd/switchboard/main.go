// Command switchboard runs a Switchboard deployment (serve) and manages one
// from the command line (accounts, agents, tokens, the inbox).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
}

// run parses args and runs the chosen command, which prints to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	cli := CLI{out: out}
	parser, err := kong.New(&cli,
		kong.Name("switchboard"),
		kong.Description("Public A2A addresses for AI agents, and the work routed between them."),
		kong.UsageOnError(),
		kong.Vars{"default_data": defaultDataDir()},
		kong.BindTo(ctx, (*context.Context)(nil)),
	)
	if err != nil {
		return err
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return err
	}
	return kctx.Run(&cli)
}
