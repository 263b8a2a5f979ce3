package switchboard

import (
	"reflect"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// partHasContent reports whether p carries one content the store can write
// and read back: any text, bytes (empty ones too), a JSON value that is not
// null, or a non-empty URL. A 0.3 data part without data (or whose compat
// value is null) converts to a part with none of these; such a part is
// refused where it arrives rather than stored unreadable.
func partHasContent(p *a2a.Part) bool {
	if p == nil {
		return false
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		return true
	case a2a.Raw:
		return c != nil
	case a2a.Data:
		return !isNull(c.Value)
	case a2a.URL:
		return c != ""
	}
	return false
}

// emptyPart returns the index of the first part in parts without content,
// or -1 when every part has one.
func emptyPart(parts a2a.ContentParts) int {
	for i, p := range parts {
		if !partHasContent(p) {
			return i
		}
	}
	return -1
}

// isNull reports whether v would be written as JSON null: nil, or a nil
// map, slice or pointer (a 0.3 data part without data converts to a nil
// map).
func isNull(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer:
		return r.IsNil()
	}
	return false
}

// keepContent returns parts without those that have no content: parts
// itself when every part has content, else a copy. A remote agent's answer
// is not ours to refuse, but a part without content cannot be written and
// read back, so it is left out of what is kept.
func keepContent(parts a2a.ContentParts) a2a.ContentParts {
	if emptyPart(parts) < 0 {
		return parts
	}
	out := make(a2a.ContentParts, 0, len(parts))
	for _, p := range parts {
		if partHasContent(p) {
			out = append(out, p)
		}
	}
	return out
}

// messageContent returns m, or a copy of it holding only the parts with
// content.
func messageContent(m *a2a.Message) *a2a.Message {
	if m == nil || emptyPart(m.Parts) < 0 {
		return m
	}
	c := *m
	c.Parts = keepContent(m.Parts)
	return &c
}

// artifactContent returns a, or a copy of it holding only the parts with
// content.
func artifactContent(a *a2a.Artifact) *a2a.Artifact {
	if a == nil || emptyPart(a.Parts) < 0 {
		return a
	}
	c := *a
	c.Parts = keepContent(a.Parts)
	return &c
}

// mapChanged returns s with f applied to each element: s itself when f
// changes none, else a copy (s may be shared with the caller).
func mapChanged[T comparable](s []T, f func(T) T) []T {
	for i, v := range s {
		if c := f(v); c != v {
			out := slices.Clone(s)
			out[i] = c
			for j := i + 1; j < len(out); j++ {
				out[j] = f(out[j])
			}
			return out
		}
	}
	return s
}
