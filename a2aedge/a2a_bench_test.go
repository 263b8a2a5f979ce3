package a2aedge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// BenchmarkSendMessageRoundTrip measures a whole send to an inbox agent
// over loopback HTTP: the client's request, the agent lookup, the peer
// token, the rate limit, decoding, the task written to SQLite, the hint
// and the answer read by the client. The message is 1 KiB of text; each
// has a new messageId, so none is a replay. Allocations count both sides.
func BenchmarkSendMessageRoundTrip(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]
	for _, v := range []struct {
		name, method string
		params       func(id, text string) map[string]any
	}{
		{"1.0", "SendMessage", facetest.UserMessage},
		{"0.3", "message/send", facetest.LegacyMessage},
	} {
		b.Run(v.name, func(b *testing.B) {
			h := facetest.New(b)
			g := h.Agent("bench")
			tok := h.PeerToken(g, "peer")
			// The body, with a placeholder for the messageId.
			tmpl, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "req-1", "method": v.method,
				"params": v.params("MESSAGE-ID", text)})
			facetest.Must(b, err)
			before, after, _ := bytes.Cut(tmpl, []byte("MESSAGE-ID"))
			url := h.Addr(g)
			b.ReportAllocs()
			for b.Loop() {
				body := make([]byte, 0, len(tmpl)+36)
				body = append(append(append(body, before...), switchboard.NewID()...), after...)
				req, err := http.NewRequest("POST", url, bytes.NewReader(body))
				facetest.Must(b, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				facetest.Must(b, err)
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				facetest.Must(b, err)
				if resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"result"`)) {
					b.Fatalf("HTTP %d: %s", resp.StatusCode, data)
				}
			}
		})
	}
}
