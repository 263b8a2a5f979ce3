package relay

import "github.com/a2aproject/a2a-go/v2/a2a"

// TurnWaiters returns how many blocking calls on this instance wait for a
// turn of the task to end, so that tests can wait for a wait to begin.
func (s *Service) TurnWaiters(id a2a.TaskID) int {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return len(s.turns.waiters[id])
}
