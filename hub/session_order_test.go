package hub_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"
)

// TestSessionWireOrderTwoSenders: two agents send a window of frames each
// to a third at once, so that their readers on the server queue frames
// for its connection at the same time, as its writer writes them: every
// frame arrives once, and each session's in order.
func TestSessionWireOrderTwoSenders(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("oa")
	_, tc := s.agent("oc")
	_, tb := s.agent("ob")
	a, c, b := s.connect(ta), s.connect(tc), s.connect(tb)
	wa := openWire(t, a, b, "ob")
	wc := openWire(t, c, b, "ob")
	n := min(wa.window.Frames, wc.window.Frames)
	var wg sync.WaitGroup
	for _, send := range []struct {
		agent *testAgent
		id    string
	}{{a, wa.id}, {c, wc.id}} {
		wg.Go(func() {
			for i := 1; i <= n; i++ {
				sendFrame(send.agent, send.id, i, "text", `"x"`)
			}
		})
	}
	next := map[string]uint64{wa.id: 1, wc.id: 1}
	for range 2 * n {
		var p connproto.SessionFrameParams
		must(t, json.Unmarshal(nextNotice(t, b, connproto.MethodSessionFrame), &p))
		if p.Seq != next[p.SessionID] {
			t.Fatalf("session %s: frame %d, want %d", p.SessionID, p.Seq, next[p.SessionID])
		}
		next[p.SessionID]++
	}
	wg.Wait()
}
