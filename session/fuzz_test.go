package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/session"
)

// sessionMethods are the methods an agent may send, by a fuzzer's byte.
var sessionMethods = []string{connproto.MethodSessionOpen, connproto.MethodSessionFrame, connproto.MethodSessionAck,
	connproto.MethodSessionClose, connproto.MethodSessionResume, connproto.MethodSessionResend, "SessionBogus"}

// FuzzAgentParams sends arbitrary params of each session method from an
// agent that holds an open session ("$S" stands for its id, "$P" for the
// peer's agent id), then an arbitrary message from "the peer's instance"
// on the agent's end: never a panic, every frame written is JSON-RPC 2.0,
// and the server never holds more than a window of frames.
func FuzzAgentParams(f *testing.F) {
	seeds := []struct {
		method byte
		params string
		peer   []byte
	}{
		{0, `{"to":"b"}`, nil},
		{0, `{"to":"b","metadata":[1]}`, nil},
		{0, `{"to":"http://x/a/b/c"}`, nil},
		{1, `{"sessionId":"$S","seq":1,"text":"hi"}`, []byte{1, 4, 1, 2, 0, 0, 0, 0}},
		{1, `{"sessionId":"$S","seq":1,"data":{"a":[1,2,{}]}}`, nil},
		{1, `{"sessionId":"$S","seq":1,"text":"a","data":1}`, nil},
		{1, `{"sessionId":"$S","seq":0,"text":7}`, nil},
		{1, `{"sessionId":"$S","seq":18446744073709551615,"text":""}`, nil},
		{2, `{"sessionId":"$S","seq":18446744073709551615}`, []byte{1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0}},
		{3, `{"sessionId":"$S","message":"bye"}`, nil},
		{4, `{"sessionId":"$S","peer":"$P","received":3,"acked":2}`, nil},
		{4, `{"sessionId":"$S","peer":"$P","received":1,"acked":9}`, nil},
		{5, `{}`, nil},
		{6, `null`, []byte{1, 9, 0, 0, 0, 0, 0, 0}},
		{1, `[`, []byte{1, 7, 1, 0}},
	}
	for _, s := range seeds {
		f.Add(s.method, s.params, s.peer)
	}
	f.Fuzz(func(t *testing.T, method byte, params string, peer []byte) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.openNow(0, a, 1, b)
		p := replaceAll(params, "$S", sid, "$P", b.agent.ID)
		w.inst[0].Handle(context.Background(), a, sessionMethods[int(method)%len(sessionMethods)], json.RawMessage(`"f1"`), json.RawMessage(p))
		if len(peer) > 0 {
			if envelope := withFrom(peer, b.agent.ID); envelope != nil {
				_ = w.bus.Publish(context.Background(), switchboard.LiveSessionSubject(sid, a.agent.ID), envelope)
			}
			_ = w.bus.Publish(context.Background(), switchboard.LiveSessionSubject(sid, a.agent.ID), peer)
			_ = w.bus.Publish(context.Background(), switchboard.LiveSessionInstanceSubject(w.inst[0].InstanceID), peer)
		}
		for _, c := range []*conn{a, b} {
			for _, f := range c.take() {
				if f.JSONRPC != "2.0" {
					t.Fatalf("%s got a frame that is not JSON-RPC 2.0: %+v", c.agent.Handle, f)
				}
			}
		}
		if n := w.inst[1].Counts().Buffered; n > int64(session.DefaultWindowFrames) {
			t.Fatalf("the server holds %d frames", n)
		}
	})
}

// withFrom returns the fuzzer's envelope bytes with its from string set
// to from (so that the end reads it as its peer's), or nil when the bytes
// are too short to hold one.
func withFrom(b []byte, from string) []byte {
	if len(b) < 4 || b[2] >= 0x80 || b[3] >= 0x80 || b[1] == 4 {
		// A frame's body is the peer end's to check (the instances of a
		// deployment trust each other's frames): only controls are forged.
		return nil
	}
	head := append([]byte{}, b[:4]...)
	head = append(head, byte(len(from)))
	head = append(head, from...)
	rest := b[4:]
	if len(rest) > 0 {
		rest = rest[1+min(int(rest[0]&0x7f), len(rest)-1):] // drop the fuzzer's own from
	}
	return append(head, rest...)
}
