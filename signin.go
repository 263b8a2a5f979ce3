package switchboard

import (
	"context"
	"time"
)

// SignIn is a sign-in session of the web console (package dashboard): an
// owner who presented the owner token once and holds a cookie since. Only
// the hash of the cookie's secret is stored, so a copy of the database
// signs no one in.
type SignIn struct {
	// Hash is HashToken of the cookie's secret.
	Hash string
	// AccountID is the account signed in.
	AccountID string
	// TokenHash is the hash of the owner token presented: the sign-in
	// lasts only while that token is active (a rotation ends it).
	TokenHash string
	// CSRF is the token every form of the signed-in pages carries.
	CSRF string
	// CreatedAt is when the owner signed in (the absolute lifetime counts
	// from it); SeenAt when the sign-in was last used (idle expiry counts
	// from it).
	CreatedAt, SeenAt time.Time
}

// SignInStore keeps the console's sign-ins.
type SignInStore interface {
	// CreateSignIn stores a new sign-in.
	CreateSignIn(ctx context.Context, s *SignIn) error
	// FindSignIn returns the sign-in with the hash, if it was seen at or
	// after seenSince and created at or after createdSince; ENOTFOUND
	// otherwise (unknown, idle too long, or older than its lifetime).
	FindSignIn(ctx context.Context, hash string, seenSince, createdSince time.Time) (*SignIn, error)
	// TouchSignIn records that the sign-in was used at the given time.
	TouchSignIn(ctx context.Context, hash string, at time.Time) error
	// DeleteSignIn ends a sign-in (sign-out); ending one that is gone is
	// not an error.
	DeleteSignIn(ctx context.Context, hash string) error
	// DeleteSignIns forgets the sign-ins last seen before seenBefore or
	// created before createdBefore, and returns how many.
	DeleteSignIns(ctx context.Context, seenBefore, createdBefore time.Time) (int, error)
}
