package ownerapi

import "time"

// Account is an account: the answer of GET /account, GET, PATCH and
// POST /accounts, and of the token rotations; GET /accounts lists them.
type Account struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Token is the owner token, set only in the answer that creates or
	// rotates it: it is shown once.
	Token string `json:"token,omitempty"`
}

// AccountCreate is the body of POST /accounts.
type AccountCreate struct {
	Name string `json:"name"`
}

// AccountUpdate is the body of PATCH /accounts/{id}: absent fields keep
// their value.
type AccountUpdate struct {
	Name     *string `json:"name,omitempty"`
	Disabled *bool   `json:"disabled,omitempty"`
}
