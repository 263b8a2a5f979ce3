package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
)

// sessionFraming is how connect --session-exec puts a session's frames on
// its command's stdin and reads frames from its stdout
// (--session-framing).
type sessionFraming string

// The framings.
const (
	// framingLines: a frame is a line, as cat and tr expect; a newline in
	// a text frame splits it into several lines, and each line of stdout
	// is a text frame.
	framingLines sessionFraming = "lines"
	// framingJSON: a frame is one line of JSON each way, so that frames
	// may carry newlines. A text frame is a JSON string; a JSON frame is
	// its JSON. On stdout a JSON string is sent as a text frame, any
	// other JSON value as a JSON frame; a line that is not JSON is logged
	// and skipped, an empty line ignored.
	framingJSON sessionFraming = "json"
)

// maxJSONLineBytes bounds a line of the command's stdout in the json
// framing, so that a command that never ends its line holds no more
// memory than this: a frame's content with every character escaped
// (\u0000 takes six bytes). A longer line is logged and skipped; a
// shorter string too long for one frame goes in pieces, as a long line
// does in the lines framing.
const maxJSONLineBytes = 6*connproto.MaxSessionFrameBytes + 2

// line returns a frame as a line of the command's stdin.
func (fr sessionFraming) line(f connector.Frame) []byte {
	if fr == framingJSON {
		return frameJSONLine(f)
	}
	return frameLine(f)
}

// send sends what the command writes to r until r ends or the session
// does.
func (fr sessionFraming) send(ctx context.Context, s *connector.Session, r io.Reader, log *slog.Logger) {
	if fr == framingJSON {
		sendJSONLines(ctx, s, r, log)
		return
	}
	sendLines(ctx, s, r, log)
}

// frameJSONLine is a frame as a line of the command's stdin in the json
// framing: a text frame's text as a JSON string, a JSON frame's JSON
// compacted; either on one line.
func frameJSONLine(f connector.Frame) []byte {
	if f.IsJSON() {
		var b bytes.Buffer
		if json.Compact(&b, f.Data) == nil {
			return append(b.Bytes(), '\n')
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	text := f.Text
	if f.IsJSON() {
		text = string(f.Data) // not JSON after all: its text, quoted
	}
	_ = enc.Encode(text) // a string always encodes; Encode ends the line
	return b.Bytes()
}

// sendJSONLines sends each line r yields as a frame (the json framing):
// a JSON string as a text frame, other JSON as a JSON frame. A line that
// is not JSON, or is longer than maxJSONLineBytes, is logged and skipped;
// an empty line is ignored. It returns when r ends or the session does.
func sendJSONLines(ctx context.Context, s *connector.Session, r io.Reader, log *slog.Logger) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, readErr := readLine(br, maxJSONLineBytes)
		err := sendJSONLine(ctx, s, line, tooLong, n, log)
		if err != nil {
			if !errors.Is(err, connector.ErrSessionClosed) && ctx.Err() == nil {
				log.Warn("send the command's output", "err", err)
			}
			_, _ = io.Copy(io.Discard, r) // let the command finish writing
			return
		}
		if readErr != nil {
			return
		}
	}
}

// sendJSONLine sends the nth line of the command's output as a frame, or
// logs why it does not; it returns an error only when the session cannot
// take frames any more.
func sendJSONLine(ctx context.Context, s *connector.Session, line []byte, tooLong bool, n int, log *slog.Logger) error {
	line = bytes.TrimSpace(line)
	switch {
	case tooLong:
		log.Warn("skipped a line of the session command's output: too long", "line", n, "max_bytes", maxJSONLineBytes)
		return nil
	case len(line) == 0:
		return nil
	case line[0] == '"':
		var text string
		if err := json.Unmarshal(line, &text); err != nil {
			break
		}
		return sendText(ctx, s, text)
	case json.Valid(line):
		err := s.SendJSON(ctx, json.RawMessage(line))
		if errors.Is(err, connector.ErrFrameTooLarge) {
			log.Warn("skipped a line of the session command's output: its JSON is larger than a frame holds", "line", n)
			return nil
		}
		return err
	}
	log.Warn("skipped a line of the session command's output: not JSON (--session-framing json)", "line", n, "bytes", len(line))
	return nil
}

// readLine reads one line of br without its newline. A line longer than
// max is read to its end and dropped: tooLong is then true. err is set
// when br ends (io.EOF) or fails, with the last line, if any.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}
