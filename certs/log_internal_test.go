package certs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestZapLogger: certmagic's zap lines land in the server's slog handler,
// its info at debug and its errors at warn, with their fields and the
// logger's name.
func TestZapLogger(t *testing.T) {
	var buf bytes.Buffer
	zl := zapLogger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).Named("obtain").With(zap.String("identifier", "a.test"))
	zl.Info("acquiring lock", zap.Int("attempt", 2))
	zl.Error("could not get certificate", zap.Error(bytes.ErrTooLarge))
	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="acquiring lock" component=certmagic logger=obtain identifier=a.test attempt=2`,
		`level=WARN msg="could not get certificate" component=certmagic logger=obtain identifier=a.test error="bytes.Buffer: too large"`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the log lacks %s:\n%s", want, out)
		}
	}
	buf.Reset()
	quiet := zapLogger(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	quiet.Info("chatter")
	if buf.Len() != 0 {
		t.Fatalf("certmagic's info at the server's info level: %s", buf.String())
	}
}
