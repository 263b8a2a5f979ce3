package hub_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
)

// TestHelloSentWithTheUpgrade: a client may write its first frame right
// behind the upgrade request, before the 101 arrives; net/http has then
// read it already, and the connection must still see it first.
func TestHelloSentWithTheUpgrade(t *testing.T) {
	s := newServer(t)
	_, tok := s.agent("eager")
	nc, err := net.DialTimeout("tcp", strings.TrimPrefix(s.srv.URL, "http://"), patience)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(patience))

	var req bytes.Buffer
	req.WriteString("GET /connect HTTP/1.1\r\nHost: switchboard\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
	req.WriteString("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
	req.WriteString("Sec-WebSocket-Protocol: " + connproto.Subprotocol + "\r\nAuthorization: Bearer " + tok + "\r\n\r\n")
	req.Write(maskedTextFrame([]byte(`{"jsonrpc":"2.0","id":"h1","method":"hello","params":{"client":"raw"}}`)))
	if _, err := nc.Write(req.Bytes()); err != nil { // one write: the frame arrives with the request
		t.Fatal(err)
	}

	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	payload := readServerFrame(t, br)
	if !bytes.Contains(payload, []byte(`"id":"h1"`)) || !bytes.Contains(payload, []byte(`"result"`)) {
		t.Fatalf("first frame %s, want the answer to hello", payload)
	}
}

// maskedTextFrame encodes a client's text frame (payload under 126 bytes).
func maskedTextFrame(p []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
	b := []byte{0x81, 0x80 | byte(len(p))}
	b = append(b, key[:]...)
	for i, c := range p {
		b = append(b, c^key[i%4])
	}
	return b
}

// readServerFrame reads one unmasked frame from the server.
func readServerFrame(t *testing.T, br *bufio.Reader) []byte {
	t.Helper()
	var h [2]byte
	if _, err := br.Read(h[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := br.Read(h[1:]); err != nil {
		t.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(br, l[:]); err != nil {
			t.Fatal(err)
		}
		n = int(l[0])<<8 | int(l[1])
	case 127:
		t.Fatal("frame too large for this test")
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return p
}
