package peers

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// TouchEvery is how often a token's last use is written: at most once a
// minute per token and instance.
const TouchEvery = time.Minute

// maxTouched bounds the tokens whose last write Usage remembers.
const maxTouched = 10000

// Toucher records a token's last use (switchboard.TokenStore).
type Toucher interface {
	TouchToken(ctx context.Context, hash string, at time.Time) error
}

// Usage records when tokens were last used, at most once every TouchEvery
// per token, so that a busy token costs one write a minute, not one per
// request. The owner sees the time in the token lists and in
// switchboard status. It is safe for concurrent use.
type Usage struct {
	tokens Toucher
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	touched map[string]time.Time // guarded by mu: token hash → last write of its use
}

// NewUsage returns a Usage writing to tokens; now is its clock (nil:
// time.Now).
func NewUsage(tokens Toucher, log *slog.Logger, now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	return &Usage{tokens: tokens, log: log, now: now, touched: make(map[string]time.Time)}
}

// Touch records that the token with the hash was used now, unless its use
// was written less than TouchEvery ago. A failed write is logged: the
// request it records goes on.
func (u *Usage) Touch(ctx context.Context, hash string) {
	now := u.now()
	u.mu.Lock()
	last, seen := u.touched[hash]
	due := !seen || now.Sub(last) >= TouchEvery
	if due {
		if len(u.touched) >= maxTouched {
			clear(u.touched) // forgetting only means one more write per token
		}
		u.touched[hash] = now
	}
	u.mu.Unlock()
	if !due {
		return
	}
	if err := u.tokens.TouchToken(ctx, hash, now); err != nil {
		u.log.Warn("record a token's use", "err", err)
	}
}
