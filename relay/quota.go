package relay

import (
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard"
)

// Default per-peer quotas (Service.MaxOpenTasksPerPeer, MaxPeerBytes).
const (
	DefaultMaxOpenTasksPerPeer       = 1000
	DefaultMaxPeerBytes        int64 = 256 << 20
)

// A peer's quotas bound what it keeps on one agent that retention does not
// clear: its unfinished tasks (submitted, working, input-required,
// auth-required), by number and by the bytes of their A2A JSON. Finished
// tasks are left to retention (RunTaskExpiry). A peer's message carries the
// quotas to the store (TaskChange.Quota), which checks them in the
// transaction that writes the message, against counts it keeps with every
// task write: one row read, however many tasks the peer holds, and no
// statement of its own. A message that would pass a quota is refused with
// EQUOTA and nothing is written; since the check is in the write, sends of
// one peer at the same moment cannot pass a quota together. An agent's
// answers are not refused for its peer's quota: they may take a peer's
// tasks past MaxPeerBytes, and its next message is then refused.

// quota returns the quotas a peer's message carries, nil if none applies,
// with held of the peer's tasks that this instance sent before writing
// them (early.go) counted toward them: each open, and as large as a task
// may be.
func (s *Service) quota(held int) *switchboard.PeerQuota {
	if s.MaxOpenTasksPerPeer <= 0 && s.MaxPeerBytes <= 0 {
		return nil
	}
	return &switchboard.PeerQuota{MaxOpenTasks: max(s.MaxOpenTasksPerPeer, 0), MaxBytes: max(s.MaxPeerBytes, 0),
		HeldOpen: held, HeldBytes: int64(held) * switchboard.MaxTaskBytes}
}

// quotaRefusal turns the store's refusal of a message for a quota into the
// peer's error, which says which limit, its value, and what to do; other
// errors pass through.
func quotaRefusal(err error) error {
	var qe *switchboard.QuotaError
	if !errors.As(err, &qe) {
		return err
	}
	if qe.TooMany {
		return switchboard.Errorf(switchboard.EQUOTA,
			"quota exceeded: a peer may have at most %d unfinished tasks on this agent, and you have %d; "+
				"wait for the agent to finish some, or cancel some (CancelTask, tasks/cancel), before starting another "+
				"(messages to your unfinished tasks are still accepted)", qe.Quota.MaxOpenTasks, qe.OpenTasks)
	}
	return switchboard.Errorf(switchboard.EQUOTA,
		"quota exceeded: a peer's unfinished tasks on this agent may hold at most %d bytes (%s) of A2A JSON, "+
			"and this message would bring yours from %d to %d bytes; wait for the agent to finish some, "+
			"or cancel some (CancelTask, tasks/cancel), or send less", qe.Quota.MaxBytes, sizeText(qe.Quota.MaxBytes), qe.Bytes, qe.Bytes+qe.Grow)
}

// sizeText writes a byte count for people: "256 MiB", "1.5 KiB", "300 B".
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGTP"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[exp])
}
