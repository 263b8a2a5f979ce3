package switchboard

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
}
