package front

import (
	"container/list"
	"sync"
)

// DefaultPassIDs bounds the ids a Service's pass-through fronts map, all
// agents and peers together: each task and each context is one entry
// (about 300 bytes). The least recently used entry goes first; its id is
// then unknown (TaskNotFound).
const DefaultPassIDs = 1 << 16

// idKind tells a task's ids from a context's.
type idKind uint8

const (
	kindTask idKind = iota
	kindContext
)

// passKey names one id of one peer: ours (the peer's) or the upstream's.
type passKey struct {
	peer string // switchboard.Peer.Key(): no other peer has the same
	kind idKind
	id   string
}

// passEntry ties our id of a peer's task or context to the upstream's,
// on one agent.
type passEntry struct {
	agent        string
	peer         string
	kind         idKind
	ours, theirs string
}

// PassIDs maps the upstream's task and context ids of pass-through
// fronts to ours, per peer, in memory: a peer reaches an upstream task
// only by the id it was given, and only its own. At most max entries are
// kept, the least recently used forgotten first.
type PassIDs struct {
	mu       sync.Mutex
	max      int
	order    *list.List                // guarded by mu: of *passEntry, the most recently used first
	byOurs   map[passKey]*list.Element // guarded by mu
	byTheirs map[passKey]*list.Element // guarded by mu
}

// NewPassIDs returns a map of at most max entries (DefaultPassIDs if
// max <= 0).
func NewPassIDs(n int) *PassIDs {
	if n <= 0 {
		n = DefaultPassIDs
	}
	return &PassIDs{max: n, order: list.New(), byOurs: make(map[passKey]*list.Element), byTheirs: make(map[passKey]*list.Element)}
}

// SetMax bounds the map to max entries (at least 1), forgetting the
// least recently used ones over it.
func (m *PassIDs) SetMax(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.max = max(n, 1)
	for m.order.Len() > m.max {
		m.removeLocked(m.order.Back())
	}
}

// Len returns how many ids are kept.
func (m *PassIDs) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

// theirs returns the upstream's id of our id of peer's, on agent ("" for
// any agent), and the agent it is on.
func (m *PassIDs) theirs(agent, peer string, kind idKind, ours string) (theirs, on string, ok bool) {
	if ours == "" {
		return "", "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el := m.byOurs[passKey{peer, kind, ours}]
	if el == nil {
		return "", "", false
	}
	e := el.Value.(*passEntry)
	if agent != "" && e.agent != agent {
		return "", "", false
	}
	m.order.MoveToFront(el)
	return e.theirs, e.agent, true
}

// ours returns our id of the upstream's id theirs for peer on agent: the
// one given before, or else want, now tied to it.
func (m *PassIDs) ours(agent, peer string, kind idKind, theirs, want string) string {
	if theirs == "" {
		return want
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el := m.byTheirs[passKey{peer, kind, theirs}]; el != nil && el.Value.(*passEntry).agent == agent {
		m.order.MoveToFront(el)
		return el.Value.(*passEntry).ours
	}
	if el := m.byOurs[passKey{peer, kind, want}]; el != nil {
		m.removeLocked(el) // our id now stands for another of theirs
	}
	e := &passEntry{agent: agent, peer: peer, kind: kind, ours: want, theirs: theirs}
	el := m.order.PushFront(e)
	m.byOurs[passKey{peer, kind, want}] = el
	m.byTheirs[passKey{peer, kind, theirs}] = el
	for m.order.Len() > m.max {
		m.removeLocked(m.order.Back())
	}
	return want
}

// removeLocked forgets the entry of el; m.mu is held.
func (m *PassIDs) removeLocked(el *list.Element) {
	e := el.Value.(*passEntry)
	m.order.Remove(el)
	if m.byOurs[passKey{e.peer, e.kind, e.ours}] == el {
		delete(m.byOurs, passKey{e.peer, e.kind, e.ours})
	}
	if m.byTheirs[passKey{e.peer, e.kind, e.theirs}] == el {
		delete(m.byTheirs, passKey{e.peer, e.kind, e.theirs})
	}
}

// forgetAgent forgets every id of agent (its front changed or went).
func (m *PassIDs) forgetAgent(agent string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for el := m.order.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*passEntry).agent == agent {
			m.removeLocked(el)
		}
		el = next
	}
}
