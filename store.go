package switchboard

import "context"

// Store is every store interface; one implementation (sqlstore.DB) provides
// them all.
type Store interface {
	AccountStore
	AgentStore
	TokenStore
	TaskStore
	PushConfigStore
	DeliveryStore
	SessionStore
	PushStore
	OutboundStore
	WakeStore
	CommunityStore
	SignInStore
	PairingStore
	OAuthStore
	AgentGlanceStore
	FrontStore
	PublishedCardStore
	OutboundPeerStore
	CertStore
	AuditStore
}

// freshReadKey marks a context whose lookups must read the database.
type freshReadKey struct{}

// FreshRead returns ctx marked so that the store's lookups of agents,
// tokens and communities read the database rather than a cache. A store may
// keep those in memory and learn of another instance's change a moment
// after it committed; a check made because a hint said something changed
// (a token revoked on another instance) must see that change, so it reads
// fresh.
func FreshRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshReadKey{}, true)
}

// IsFreshRead reports whether ctx was marked by FreshRead.
func IsFreshRead(ctx context.Context) bool {
	v, _ := ctx.Value(freshReadKey{}).(bool)
	return v
}
