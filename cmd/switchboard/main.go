package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard/connector"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(exitStatus(err))
	}
}

// exitTerminal is the exit status of connect when the server refused the
// agent for good (token revoked or mistyped, agent deleted, not in
// connector mode): starting again would not help. It is EX_CONFIG of
// sysexits.h, and the systemd unit names it in RestartPreventExitStatus.
const exitTerminal = 78

// exitStatus returns the exit status for an error run returned.
func exitStatus(err error) int {
	if errors.Is(err, connector.ErrUnauthorized) || errors.Is(err, connector.ErrAgentGone) || errors.Is(err, connector.ErrNotConnector) {
		return exitTerminal
	}
	return 1
}

// run parses args and runs the chosen command, which prints to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	return runIO(ctx, args, os.Stdin, out, os.Stderr)
}

// runIO is run with the command's standard input and error output given.
func runIO(ctx context.Context, args []string, stdin io.Reader, out, errOut io.Writer) error {
	cli := CLI{out: out, errOut: errOut, stdin: stdin}
	parser, err := kong.New(&cli,
		kong.Name("switchboard"),
		kong.Description("Public A2A addresses for AI agents, and the work routed between them."),
		kong.UsageOnError(),
		kong.Vars{"default_data": defaultDataDir()},
		serveVars(),
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
