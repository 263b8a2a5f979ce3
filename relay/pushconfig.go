package relay

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// errPushConfigNotFound answers for a configuration that does not exist and
// for one on a task the caller may not see.
var errPushConfigNotFound = switchboard.Errorf(switchboard.ENOTFOUND, "push notification config not found")

// SetPushConfig stores a push configuration on a task the peer may see,
// replacing one with the same id, and returns it with its id filled in.
// Configurations on finished tasks are refused: nothing more would be sent.
func (s *Service) SetPushConfig(ctx context.Context, caller switchboard.Peer, c a2a.PushConfig, proto switchboard.ProtocolVersion) (*switchboard.PushConfig, error) {
	t, err := s.GetTask(ctx, caller, c.TaskID)
	if err != nil {
		return nil, err
	}
	if t.State().Terminal() {
		return nil, switchboard.Errorf(switchboard.EUNSUPPORTED, "task %s is %s; no more notifications will be sent", t.ID(), switchboard.ShortState(t.State()))
	}
	if err := ValidatePushConfig(&c); err != nil {
		return nil, err
	}
	pc := &switchboard.PushConfig{Config: c, Protocol: proto, CreatedAt: s.Now().UTC()}
	if err := s.pushes.SavePushConfig(ctx, pc); err != nil {
		return nil, err
	}
	return pc, nil
}

// GetPushConfig returns one push configuration of a task the peer may see.
// An empty id returns the task's first configuration.
func (s *Service) GetPushConfig(ctx context.Context, caller switchboard.Peer, taskID a2a.TaskID, id string) (*switchboard.PushConfig, error) {
	if _, err := s.GetTask(ctx, caller, taskID); err != nil {
		return nil, err
	}
	if id == "" {
		all, err := s.pushes.FindPushConfigs(ctx, taskID)
		if err != nil {
			return nil, err
		} else if len(all) == 0 {
			return nil, errPushConfigNotFound
		}
		return all[0], nil
	}
	pc, err := s.pushes.FindPushConfig(ctx, taskID, id)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, errPushConfigNotFound
	}
	return pc, err
}

// ListPushConfigs returns the push configurations of a task the peer may see.
func (s *Service) ListPushConfigs(ctx context.Context, caller switchboard.Peer, taskID a2a.TaskID) ([]*switchboard.PushConfig, error) {
	if _, err := s.GetTask(ctx, caller, taskID); err != nil {
		return nil, err
	}
	return s.pushes.FindPushConfigs(ctx, taskID)
}

// DeletePushConfig removes a push configuration of a task the peer may see.
// Deleting one that does not exist succeeds: the call is idempotent.
func (s *Service) DeletePushConfig(ctx context.Context, caller switchboard.Peer, taskID a2a.TaskID, id string) error {
	if _, err := s.GetTask(ctx, caller, taskID); err != nil {
		return err
	}
	if id == "" {
		return switchboard.Errorf(switchboard.EINVALID, "push notification config id is required")
	}
	return s.pushes.DeletePushConfig(ctx, taskID, id)
}
