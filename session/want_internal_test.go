package session

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/membus"
)

// recorder is an Endpoint that keeps what is written to it.
type recorder struct {
	agent switchboard.Agent
	mu    sync.Mutex
	out   [][]byte // guarded by mu
}

func (r *recorder) SessionAgent() *switchboard.Agent { return &r.agent }
func (r *recorder) SessionHolder() string            { return "conn/test" }
func (r *recorder) SessionWrite(b []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out = append(r.out, b)
	return true
}

// TestWantOnlyWhatIsHeld: the peer's end asks for frames again (a gap on
// its side); the agent is asked to send again only frames it sent and
// the peer's agent has not taken in (it may have let go of the others),
// never ones it has not sent.
func TestWantOnlyWhatIsHeld(t *testing.T) {
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	s := New(Deps{Carrier: bus}, Config{})
	ep := &recorder{agent: switchboard.Agent{ID: "a"}}
	e := newEnd(s, "s1", "b", ep, stateOpen, 0, 0)
	e.sent, e.peerAcked = 5, 2 // frames 1-5 sent; the peer's agent took in 1-2
	for from, want := range map[uint64]bool{1: false, 2: false, 3: true, 5: true, 6: false, 100: false} {
		ep.mu.Lock()
		ep.out = nil
		ep.mu.Unlock()
		e.mu.Lock()
		e.handleLocked(&envelope{kind: kindWant, n1: from, from: "b"})
		e.mu.Unlock()
		var asked []uint64
		for _, b := range ep.out {
			var f struct {
				Method string                        `json:"method"`
				Params connproto.SessionResendParams `json:"params"`
			}
			if json.Unmarshal(b, &f) == nil && f.Method == connproto.MethodSessionResend {
				asked = append(asked, f.Params.From)
			}
		}
		if got := len(asked) == 1 && asked[0] == from; got != want || (!want && len(asked) != 0) {
			t.Errorf("a want from %d: the agent was asked to send again from %v; want asked %v", from, asked, want)
		}
	}
}
