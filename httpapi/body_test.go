package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestRefusedBodyIsRead sends bodies that the server refuses without
// reading them (too large by its declared length; no token): each is read
// whole all the same, the client's writes all succeed, the refusal comes,
// and then the connection closes cleanly. Closing it on the unread bytes
// instead resets it, and a client still writing its body (Go's) then
// reports the failed write rather than the refusal.
func TestRefusedBodyIsRead(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("big")
	peer := h.PeerToken(g, "bob")
	addr, _ := listen(t, h, httpapi.ListenerConfig{UnauthenticatedPerAddress: -1})
	tests := map[string]struct {
		path, token string
		size        int
		status      int
	}{
		"Oversized":       {"/a/big", peer, httpapi.DefaultMaxBody + 1, http.StatusRequestEntityTooLarge},
		"Unauthenticated": {"/agents", "", 512 << 10, http.StatusUnauthorized},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			facetest.Must(t, err)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // the test's own bound
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", tt.path, tt.size)
			if tt.token != "" {
				head += "Authorization: Bearer " + tt.token + "\r\n"
			}
			sent := make(chan error, 1)
			go func() {
				_, err := io.Copy(c, strings.NewReader(head+"\r\n"+strings.Repeat("x", tt.size)))
				sent <- err
			}()
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			facetest.Must(t, err)
			_, err = io.Copy(io.Discard, resp.Body)
			facetest.Must(t, err)
			if err := <-sent; err != nil {
				t.Fatalf("sending the body: %v", err)
			}
			if resp.StatusCode != tt.status || !resp.Close {
				t.Fatalf("answer %s, close %v; want %d with Connection: close", resp.Status, resp.Close, tt.status)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("after the answer: %v, want the connection closed cleanly (EOF)", err)
			}
		})
	}
}
