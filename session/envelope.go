package session

import (
	"encoding/binary"
	"errors"
)

// The ends of a session talk through the Carrier in envelopes: one byte of
// version, one of kind, two numbers, four strings and a body:
//
//	version kind uvarint(n1) uvarint(n2) (uvarint(len) bytes)×4 body…
//
// The format is the deployment's own (instances of one deployment read
// each other's), not the connector protocol's; version lets a newer
// instance refuse what it cannot read during a rolling upgrade.

// envelopeVersion is the version of the format this code writes.
const envelopeVersion = 1

// kind says what an envelope is.
type kind byte

const (
	// kindOpen, to an instance: offer a session to one of its agents.
	// from, conn: the agent asking and its connection; s1, s2: the agent
	// asked and the connection it was seen on; body: the
	// connproto.SessionOffer.
	kindOpen kind = iota + 1
	// kindAccept: the agent asked accepted. conn: its connection.
	kindAccept
	// kindRefuse: the agent asked refused, or could not be asked. n1: the
	// JSON-RPC error code (negated); s1: the message.
	kindRefuse
	// kindFrame: one frame. n1: its seq; n2: the bytes of its content;
	// body: the SessionFrame notification as the receiving agent reads it.
	kindFrame
	// kindAck: the sending end's agent took in frames up to n1.
	kindAck
	// kindPing: the sending end is there. n1: what its agent acknowledged;
	// n2: the last seq it passed on (a frame lost at the tail shows).
	kindPing
	// kindWant: send the frames from n1 on again.
	kindWant
	// kindAttach: the sending end's agent resumed the session on a new
	// connection (conn). n1: the last seq it received; n2: the last it
	// acknowledged.
	kindAttach
	// kindAttached: the answer to kindAttach, with the same fields.
	kindAttached
	// kindAway: the connection conn of the sending end's agent dropped;
	// the agent may come back within the grace.
	kindAway
	// kindClose: the session ended. s1: the reason; s2: the message.
	kindClose
	kindLimit // one past the last kind
)

// envelope is one message between the ends of a session.
type envelope struct {
	kind   kind
	n1, n2 uint64
	from   string // the agent of the end that sent it
	conn   string // its connection, where the kind says
	s1, s2 string
	body   []byte
}

// maxEnvelopeString bounds each string of an envelope.
const maxEnvelopeString = 4 << 10

// errEnvelope is returned for an envelope that cannot be read.
var errEnvelope = errors.New("session: malformed envelope")

// appendEnvelope appends e to b, its body last: a caller may leave e.body
// nil and append the body itself.
func appendEnvelope(b []byte, e *envelope) []byte {
	b = append(b, envelopeVersion, byte(e.kind))
	b = binary.AppendUvarint(b, e.n1)
	b = binary.AppendUvarint(b, e.n2)
	for _, s := range [...]string{e.from, e.conn, e.s1, e.s2} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, e.body...)
}

// encode returns e's bytes.
func (e *envelope) encode() []byte {
	n := 2 + 2*binary.MaxVarintLen64 + 4*binary.MaxVarintLen16 + len(e.from) + len(e.conn) + len(e.s1) + len(e.s2) + len(e.body)
	return appendEnvelope(make([]byte, 0, n), e)
}

// decodeEnvelope reads an envelope. Its body is a part of data.
func decodeEnvelope(data []byte) (*envelope, error) {
	if len(data) < 2 || data[0] != envelopeVersion || data[1] == 0 || kind(data[1]) >= kindLimit {
		return nil, errEnvelope
	}
	e := &envelope{kind: kind(data[1])}
	rest := data[2:]
	var ok bool
	if e.n1, rest, ok = readUvarint(rest); !ok {
		return nil, errEnvelope
	}
	if e.n2, rest, ok = readUvarint(rest); !ok {
		return nil, errEnvelope
	}
	for _, s := range [...]*string{&e.from, &e.conn, &e.s1, &e.s2} {
		var n uint64
		if n, rest, ok = readUvarint(rest); !ok || n > maxEnvelopeString || n > uint64(len(rest)) {
			return nil, errEnvelope
		}
		*s, rest = string(rest[:n]), rest[n:]
	}
	e.body = rest
	return e, nil
}

// readUvarint reads one uvarint from b.
func readUvarint(b []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}
