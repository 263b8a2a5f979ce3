package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// AccountCmd groups the account commands.
type AccountCmd struct {
	Create  AccountCreateCmd  `cmd:"" help:"Create an owner account and print its owner token."`
	List    AccountListCmd    `cmd:"" help:"List accounts."`
	Disable AccountDisableCmd `cmd:"" help:"Disable an account: its token stops working and its agents are not served."`
	Enable  AccountEnableCmd  `cmd:"" help:"Enable a disabled account."`
	Rotate  AccountRotateCmd  `cmd:"" help:"Give an account a new owner token; the old one stops working."`
}

// AccountCreateCmd creates an account.
type AccountCreateCmd struct {
	Name string `arg:"" help:"Account name."`
}

// Run creates the account.
func (c *AccountCreateCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var a ownerapi.Account
	if printed, err := cl.call(ctx, "POST", "/accounts", ownerapi.AccountCreate{Name: c.Name}, &a); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "created account %q (%s)\nowner token (shown once):\n\n  %s\n\n", a.Name, a.ID, a.Token)
	return nil
}

// AccountListCmd lists accounts.
type AccountListCmd struct{}

// Run lists the accounts.
func (c *AccountListCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var all []ownerapi.Account
	if printed, err := cl.call(ctx, "GET", "/accounts", nil, &all); err != nil || printed {
		return err
	}
	tw := tabwriter.NewWriter(cl.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tSTATE")
	for _, a := range all {
		state := "enabled"
		if a.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.ID, a.Name, a.Role, state)
	}
	return tw.Flush()
}

// AccountDisableCmd disables an account.
type AccountDisableCmd struct {
	ID string `arg:"" help:"Account id."`
}

// Run disables the account.
func (c *AccountDisableCmd) Run(ctx context.Context, cli *CLI) error {
	return setAccountDisabled(ctx, cli, c.ID, true)
}

// AccountEnableCmd enables an account.
type AccountEnableCmd struct {
	ID string `arg:"" help:"Account id."`
}

// Run enables the account.
func (c *AccountEnableCmd) Run(ctx context.Context, cli *CLI) error {
	return setAccountDisabled(ctx, cli, c.ID, false)
}

func setAccountDisabled(ctx context.Context, cli *CLI, id string, disabled bool) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var a ownerapi.Account
	if printed, err := cl.call(ctx, "PATCH", "/accounts/"+pathEscape(id), ownerapi.AccountUpdate{Disabled: &disabled}, &a); err != nil || printed {
		return err
	}
	state := "enabled"
	if a.Disabled {
		state = "disabled"
	}
	fmt.Fprintf(cl.out, "account %q is %s\n", a.Name, state)
	return nil
}

// AccountRotateCmd rotates an account's owner token.
type AccountRotateCmd struct {
	ID string `arg:"" help:"Account id."`
}

// Run rotates the token.
func (c *AccountRotateCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var a ownerapi.Account
	if printed, err := cl.call(ctx, "POST", "/accounts/"+pathEscape(c.ID)+"/rotate", nil, &a); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "new owner token for %q (shown once; the old one no longer works):\n\n  %s\n\n", a.Name, a.Token)
	return nil
}

// WhoamiCmd shows the account of the owner token.
type WhoamiCmd struct{}

// Run shows the account.
func (c *WhoamiCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var a ownerapi.Account
	if printed, err := cl.call(ctx, "GET", "/account", nil, &a); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "%s (%s, %s) at %s\n", a.Name, a.Role, a.ID, cl.base)
	return nil
}
