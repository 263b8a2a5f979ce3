package front

import (
	"errors"
	"strings"
	"testing"
)

// TestSSEDataBoundsAnEvent: an event's data is bounded as a whole, not
// line by line: one line, or many short lines, past the bound fail with
// ErrTooLarge, after the events before them.
func TestSSEDataBoundsAnEvent(t *testing.T) {
	const max = 64
	for name, c := range map[string]struct {
		stream string
		events int
	}{
		"at the bound":              {"data: " + strings.Repeat("a", max) + "\n\n", 1},
		"at the bound, CRLF":        {"data: " + strings.Repeat("a", max) + "\r\n\r\n", 1},
		"one line past it":          {"data: ok\n\ndata: " + strings.Repeat("a", max+1) + "\n\n", -1},
		"many lines past it":        {"data: ok\n\n" + strings.Repeat("data: aaaaaaa\n", max/8+1) + "\n", -1},
		"a long line of no data":    {": " + strings.Repeat("a", 2*max) + "\ndata: ok\n\n", -1},
		"lines at the bound in all": {strings.Repeat("data: a\n", max/2) + "\n", 1},
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			var err error
			for data, e := range sseData(strings.NewReader(c.stream), max) {
				if e != nil {
					err = e
					break
				}
				if len(data) > max {
					t.Fatalf("an event of %d bytes", len(data))
				}
				n++
			}
			switch {
			case c.events >= 0 && (err != nil || n != c.events):
				t.Fatalf("%d events, %v; want %d", n, err, c.events)
			case c.events < 0 && !errors.Is(err, ErrTooLarge):
				t.Fatalf("%d events, %v; want ErrTooLarge", n, err)
			}
		})
	}
}
