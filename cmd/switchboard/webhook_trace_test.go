package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/otlptest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// TestWebhookTraceparent: with tracing on, a webhook agent's request
// carries a traceparent header naming the dispatch span, in the trace of
// the peer's call.
func TestWebhookTraceparent(t *testing.T) {
	got := make(chan string, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Traceparent"):
		default:
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "completed", "result": "done"})
	}))
	defer hook.Close()
	rcv := otlptest.Start(t)
	m := MustRunMain(t, t.TempDir(), "", func(cfg *server.Config) {
		cfg.OTLPEndpoint, cfg.TraceSample, cfg.TraceBatchTimeout = rcv.URL, 1, 20*time.Millisecond
		cfg.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	cli(t, m, "agent", "create", "hooked", "--mode", "webhook", "--endpoint", hook.URL)
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "hooked", "bob")), &tok); err != nil {
		t.Fatal(err)
	}
	peerSend(t, m, "hooked", tok.Token, "m1", "hook me", "", false)
	var header string
	select {
	case header = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was not called")
	}
	testwait.ForErr(t, "the dispatch span", func() error {
		for _, s := range rcv.Spans() {
			if s.Name != "dispatch webhook" || fmt.Sprintf("00-%s-%s-01", s.TraceID, s.SpanID) != header {
				continue
			}
			for _, p := range rcv.Trace(s.TraceID) {
				if p.SpanID == s.ParentID && p.Name == "a2a SendMessage" {
					return nil
				}
			}
			return fmt.Errorf("dispatch span %s not below the call", s.SpanID)
		}
		return fmt.Errorf("no dispatch span for the header %q", header)
	})
}
