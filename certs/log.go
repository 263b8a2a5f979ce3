package certs

import (
	"context"
	"log/slog"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLogger returns a zap logger that writes into h (see the package
// comment): certmagic's debug and info lines at slog's debug, its
// warnings at warn, and its errors at warn too, since the failures that
// matter get a line of their own, at error, with their cause and fix.
func zapLogger(h slog.Handler) *zap.Logger {
	return zap.New(&slogCore{h: h})
}

// slogCore is a zapcore.Core that hands entries to a slog.Handler.
type slogCore struct {
	h     slog.Handler
	attrs []slog.Attr // the fields of With, in order
}

// level maps a zap level to the slog level certmagic's lines get.
func level(l zapcore.Level) slog.Level {
	switch {
	case l < zapcore.WarnLevel:
		return slog.LevelDebug
	default:
		return slog.LevelWarn
	}
}

// Enabled implements zapcore.LevelEnabler.
func (c *slogCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), level(l))
}

// With implements zapcore.Core.
func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{h: c.h, attrs: append(slices.Clip(c.attrs), attrs(fields)...)}
}

// Check implements zapcore.Core.
func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write implements zapcore.Core.
func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, level(e.Level), e.Message, 0)
	r.AddAttrs(slog.String("component", "certmagic"))
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(c.attrs...)
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

// Sync implements zapcore.Core.
func (c *slogCore) Sync() error { return nil }

// attrs turns zap fields into slog attributes, keeping their order.
func attrs(fields []zapcore.Field) []slog.Attr {
	out := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		for k, v := range enc.Fields {
			out = append(out, slog.Any(k, v))
		}
	}
	return out
}
