package front

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// sseData reads the data of each event of a server-sent event stream as
// the SDK's reader does: the values of its "data:" lines (one space after
// the colon dropped) joined with "\n", an event ended by a blank line or
// the stream's end, an event with no data skipped, every other line
// ignored. Unlike the SDK's, which bounds each line at 10 MB but not their
// sum, it bounds an event's data at max bytes, and fails a larger one
// with ErrTooLarge.
func sseData(r io.Reader, max int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		sc := bufio.NewScanner(r)
		limit := max + len("data: \r\n") // a line's, whatever its field
		sc.Buffer(make([]byte, 0, min(4096, limit)), limit)
		var event []byte
		flush := func() bool {
			if len(event) == 0 {
				return true
			}
			data := event
			event = nil // the caller may keep data
			return yield(data, nil)
		}
		tooLarge := func() {
			yield(nil, fmt.Errorf("SSE stream error: an event of more than %d bytes: %w", max, ErrTooLarge))
		}
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) == 0 {
				if !flush() {
					return
				}
				continue
			}
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			data, _ = bytes.CutPrefix(data, []byte(" "))
			if len(event) > 0 {
				event = append(event, '\n')
			}
			if len(event)+len(data) > max {
				tooLarge()
				return
			}
			event = append(event, data...)
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				tooLarge()
			} else {
				yield(nil, fmt.Errorf("SSE stream error: %w", err))
			}
			return
		}
		flush()
	}
}
