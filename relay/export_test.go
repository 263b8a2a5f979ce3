package relay

import "github.com/a2aproject/a2a-go/v2/a2a"

// TurnWaiters returns how many blocking calls on this instance wait for a
// turn of the task to end, so that tests can wait for a wait to begin.
func (s *Service) TurnWaiters(id a2a.TaskID) int {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return len(s.turns.waiters[id])
}

// MessageWaiters returns how many sends of a message on this instance
// have waited for another send of it in progress, so that tests can wait
// for a copy to wait.
func (s *Service) MessageWaiters(agentID, peerID, messageID string) int {
	v, ok := s.messages.Load(messageKey(agentID, peerID, messageID))
	if !ok {
		return 0
	}
	return int(v.(*messageHold).wait.Load())
}

// PeerWrites returns how many writes of a peer's messages or unwritten
// tasks on this instance wait for their turn or hold it (early.go), so
// that tests can wait for a write to wait.
func (s *Service) PeerWrites(agentID, peerID string) int {
	s.earlyUse.mu.Lock()
	defer s.earlyUse.mu.Unlock()
	if p := s.earlyUse.peers[peerKey(agentID, peerID)]; p != nil {
		return p.writers
	}
	return 0
}

// EarlyTasks returns how many tasks sent before they were written this
// instance still keeps, by delivery and by task id.
func (s *Service) EarlyTasks() (byDelivery, byTask int) {
	s.early.Range(func(any, any) bool { byDelivery++; return true })
	s.earlyTasks.Range(func(any, any) bool { byTask++; return true })
	return byDelivery, byTask
}
