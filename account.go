package switchboard

import (
	"context"
	"time"
)

// Role is what an account may do.
type Role string

// Roles.
const (
	// RoleOperator runs the deployment: it creates and manages owner
	// accounts and sees every agent. It is created at first start.
	RoleOperator Role = "operator"
	// RoleOwner controls its own agents and nothing else.
	RoleOwner Role = "owner"
)

// Account is an owner of agents. The operator is an owner too.
type Account struct {
	ID        string
	Name      string // unique, chosen by the operator
	Role      Role
	Disabled  bool // a disabled account cannot manage anything and its agents are not served
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsOperator reports whether a is the deployment's operator account.
func (a *Account) IsOperator() bool { return a.Role == RoleOperator }

// AccountUpdate holds the fields to change; nil fields stay as they are.
type AccountUpdate struct {
	Name     *string
	Disabled *bool
}

// AccountStore keeps accounts.
type AccountStore interface {
	// CreateAccount stores a. It returns ECONFLICT if the name is taken.
	CreateAccount(ctx context.Context, a *Account) error

	// FindAccountByID returns the account, or ENOTFOUND.
	FindAccountByID(ctx context.Context, id string) (*Account, error)

	// FindAccounts returns every account, oldest first.
	FindAccounts(ctx context.Context) ([]*Account, error)

	// UpdateAccount changes an account and returns it, or ENOTFOUND.
	UpdateAccount(ctx context.Context, id string, upd AccountUpdate) (*Account, error)
}

// MaxNameLen is the longest account or agent name.
const MaxNameLen = 200
