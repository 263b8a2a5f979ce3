package bustest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// CarrierBus is a bus that carries messages too: what both buses are.
type CarrierBus interface {
	switchboard.Bus
	switchboard.Carrier
}

// RunCarrier runs the contract suite of switchboard.Carrier. open returns a
// new bus for each subtest; the suite closes it.
func RunCarrier(t *testing.T, open func(t *testing.T) CarrierBus) {
	tests := map[string]func(*testing.T, CarrierBus){
		"PublishReachesSubscriber": testPublish,
		"InOrderNeverMerged":       testInOrder,
		"OtherSubjectQuiet":        testCarrierOther,
		"CloseStops":               testSubscriptionClose,
		"ManySubscribers":          testManySubscribers,
		"PublishFromSubscriber":    testPublishFromSubscriber,
		"BusClose":                 testCarrierBusClose,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			b := open(t)
			t.Cleanup(func() { _ = b.Close() })
			fn(t, b)
		})
	}
}

// RunCarrierAcross runs the part of the Carrier's contract that spans
// instances; open returns two buses of one deployment, ready to carry
// hints between them.
func RunCarrierAcross(t *testing.T, open func(t *testing.T) (a, b CarrierBus)) {
	tests := map[string]func(*testing.T, CarrierBus, CarrierBus){
		"PublishReachesOtherInstance": testAcrossPublish,
		"AnswerFindsSubscription":     testAcrossAnswer,
		"AcrossCloseStops":            testAcrossClose,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			fn(t, a, b)
		})
	}
}

// inbox records the messages a subscription received.
type inbox struct {
	mu   sync.Mutex
	got  []string
	more chan struct{} // capacity 1: a message arrived
}

func newInbox() *inbox { return &inbox{more: make(chan struct{}, 1)} }

func (in *inbox) fn(data []byte) {
	in.mu.Lock()
	in.got = append(in.got, string(data))
	in.mu.Unlock()
	select {
	case in.more <- struct{}{}:
	default:
	}
}

// messages returns what arrived so far.
func (in *inbox) messages() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.got)
}

// waitN waits up to 5 s for n messages and returns what arrived.
func (in *inbox) waitN(n int) []string {
	deadline := time.After(5 * time.Second)
	for {
		if got := in.messages(); len(got) >= n {
			return got
		}
		select {
		case <-in.more:
		case <-deadline:
			return in.messages()
		}
	}
}

// quietFor reports whether nothing beyond the n messages already there
// arrives for a short while.
func (in *inbox) quietFor(n int) bool {
	select {
	case <-in.more:
	case <-time.After(50 * time.Millisecond):
	}
	return len(in.messages()) == n
}

func subscribe(t *testing.T, c switchboard.Carrier, subject string, in *inbox) switchboard.Subscription {
	t.Helper()
	s, err := c.Subscribe(context.Background(), subject, in.fn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func publish(t *testing.T, c switchboard.Carrier, subject, data string) {
	t.Helper()
	if err := c.Publish(context.Background(), subject, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// numbered returns "m0" … "m{n-1}".
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("m", i)
	}
	return out
}

func testPublish(t *testing.T, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "session.1.a", in)
	defer s.Close()
	publish(t, b, "session.1.a", "hello")
	if got := in.waitN(1); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("got %q, want [hello]", got)
	}
}

func testInOrder(t *testing.T, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "s", in)
	defer s.Close()
	want := numbered(1000)
	for _, m := range want {
		publish(t, b, "s", m) // never merged, never reordered
	}
	if got := in.waitN(len(want)); !slices.Equal(got, want) {
		t.Fatalf("got %d messages, want %d in order; first differences at %v", len(got), len(want), firstDiff(got, want))
	}
}

// firstDiff returns the index where got and want first differ.
func firstDiff(got, want []string) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	return min(len(got), len(want))
}

func testCarrierOther(t *testing.T, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "s1", in)
	defer s.Close()
	publish(t, b, "s2", "x")
	if err := b.Notify(context.Background(), "s1"); err != nil { // a hint is not a message
		t.Fatal(err)
	}
	if !in.quietFor(0) {
		t.Fatalf("received %q for another subject", in.messages())
	}
}

func testSubscriptionClose(t *testing.T, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "s", in)
	publish(t, b, "s", "before")
	in.waitN(1)
	s.Close()
	s.Close() // idempotent
	publish(t, b, "s", "after")
	if !in.quietFor(1) {
		t.Fatalf("a closed subscription received %q", in.messages())
	}
}

func testManySubscribers(t *testing.T, b CarrierBus) {
	in1, in2 := newInbox(), newInbox()
	s1, s2 := subscribe(t, b, "s", in1), subscribe(t, b, "s", in2)
	defer s2.Close()
	publish(t, b, "s", "one")
	if len(in1.waitN(1)) != 1 || len(in2.waitN(1)) != 1 {
		t.Fatal("not every subscriber received the message")
	}
	s1.Close()
	publish(t, b, "s", "two")
	if got := in2.waitN(2); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("the remaining subscriber got %q", got)
	}
	if !in1.quietFor(1) {
		t.Fatalf("the closed one got %q", in1.messages())
	}
}

func testPublishFromSubscriber(t *testing.T, b CarrierBus) {
	answers := newInbox()
	sa := subscribe(t, b, "answers", answers)
	defer sa.Close()
	sq, err := b.Subscribe(context.Background(), "questions", func(data []byte) {
		_ = b.Publish(context.Background(), "answers", append([]byte("re: "), data...))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	publish(t, b, "questions", "q")
	if got := answers.waitN(1); !slices.Equal(got, []string{"re: q"}) {
		t.Fatalf("got %q", got)
	}
}

func testCarrierBusClose(t *testing.T, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "s", in)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := b.Publish(context.Background(), "s", []byte("x")); !errors.Is(err, switchboard.ErrBusClosed) {
		t.Fatalf("publish after close: %v", err)
	}
	if _, err := b.Subscribe(context.Background(), "s", in.fn); !errors.Is(err, switchboard.ErrBusClosed) {
		t.Fatalf("subscribe after close: %v", err)
	}
}

func testAcrossPublish(t *testing.T, a, b CarrierBus) {
	inA, inB := newInbox(), newInbox()
	sa, sb := subscribe(t, a, "s", inA), subscribe(t, b, "s", inB)
	defer sa.Close()
	defer sb.Close()
	// The subscription of b may take a moment to reach a's server.
	waitCarried(t, a, "s", inB)
	base := len(inB.messages())
	want := numbered(500)
	for _, m := range want {
		publish(t, a, "s", m)
	}
	if got := inB.waitN(base + len(want)); !slices.Equal(got[base:], want) {
		t.Fatalf("the other instance got %d of %d messages in order (first difference at %d)", len(got)-base, len(want), firstDiff(got[base:], want))
	}
	if got := inA.waitN(base + len(want)); len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
		t.Fatal("the publisher's own instance did not get them in order")
	}
}

// waitCarried publishes probes on subject from c until one reaches in.
func waitCarried(t *testing.T, c switchboard.Carrier, subject string, in *inbox) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(in.messages()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no message crossed to the other instance")
		}
		publish(t, c, subject, "probe")
		select {
		case <-in.more:
		case <-time.After(20 * time.Millisecond):
		}
	}
	for !in.quietFor(len(in.messages())) { // let the probes in flight land
	}
}

// testAcrossAnswer: a subscribes, then asks b on a subject b has long
// subscribed to; b answers on a's subject at once. The answer must find
// a's new subscription (what a live session's open and attach rely on).
func testAcrossAnswer(t *testing.T, a, b CarrierBus) {
	probe := newInbox()
	sp := subscribe(t, b, "questions", probe)
	waitCarried(t, a, "questions", probe)
	// The answering subscription comes before the probe's goes, so that
	// b's interest in the subject never lapses: an instance may forget a
	// subject nobody held for a moment, and drop what is published to it.
	sq, err := b.Subscribe(context.Background(), "questions", func(data []byte) {
		if string(data) != "probe" {
			_ = b.Publish(context.Background(), string(data), []byte("answer"))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	sp.Close()
	for i := range 20 {
		in := newInbox()
		subject := fmt.Sprint("answers.", i)
		s := subscribe(t, a, subject, in)
		publish(t, a, "questions", subject)
		if got := in.waitN(1); len(got) != 1 {
			t.Fatalf("answer %d did not arrive", i)
		}
		s.Close()
	}
}

func testAcrossClose(t *testing.T, a, b CarrierBus) {
	in := newInbox()
	s := subscribe(t, b, "s", in)
	waitCarried(t, a, "s", in)
	n := len(in.messages())
	s.Close()
	// Wait for the unsubscription to be known: a subscription of another
	// subject made after it, on the same connection, reaches a.
	marker := newInbox()
	sm := subscribe(t, b, "marker", marker)
	defer sm.Close()
	waitCarried(t, a, "marker", marker)
	publish(t, a, "s", "after")
	if !in.quietFor(n) {
		t.Fatalf("a closed subscription received %q", in.messages()[n:])
	}
}
