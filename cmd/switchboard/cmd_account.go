package main

import (
	"context"
	"fmt"

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
	return ownerCall(ctx, cli, "POST", "/accounts", ownerapi.AccountCreate{Name: c.Name}, func(cl *client, a *ownerapi.Account) error {
		fmt.Fprintf(cl.out, "created account %q (%s)\nowner token (shown once):\n\n  %s\n\n", a.Name, a.ID, a.Token)
		return nil
	})
}

// AccountListCmd lists accounts.
type AccountListCmd struct{}

// Run lists the accounts.
func (c *AccountListCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/accounts", nil, func(cl *client, all *[]ownerapi.Account) error {
		tw := cl.table("ID\tNAME\tROLE\tSTATE")
		for _, a := range *all {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.ID, a.Name, a.Role, accountState(a))
		}
		return tw.Flush()
	})
}

// accountState is how the commands print whether an account is disabled.
func accountState(a ownerapi.Account) string {
	if a.Disabled {
		return "disabled"
	}
	return "enabled"
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
	return ownerCall(ctx, cli, "PATCH", "/accounts/"+pathEscape(id), ownerapi.AccountUpdate{Disabled: &disabled}, func(cl *client, a *ownerapi.Account) error {
		fmt.Fprintf(cl.out, "account %q is %s\n", a.Name, accountState(*a))
		return nil
	})
}

// AccountRotateCmd rotates an account's owner token.
type AccountRotateCmd struct {
	ID string `arg:"" help:"Account id."`
}

// Run rotates the token.
func (c *AccountRotateCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "POST", "/accounts/"+pathEscape(c.ID)+"/rotate", nil, func(cl *client, a *ownerapi.Account) error {
		fmt.Fprintf(cl.out, "new owner token for %q (shown once; the old one no longer works):\n\n  %s\n\n", a.Name, a.Token)
		return nil
	})
}

// WhoamiCmd shows the account of the owner token.
type WhoamiCmd struct{}

// Run shows the account.
func (c *WhoamiCmd) Run(ctx context.Context, cli *CLI) error {
	return ownerCall(ctx, cli, "GET", "/account", nil, func(cl *client, a *ownerapi.Account) error {
		fmt.Fprintf(cl.out, "%s (%s, %s) at %s\n", a.Name, a.Role, a.ID, cl.base)
		return nil
	})
}
