package outbox

import (
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/a2ajson"
)

// keepContent returns parts without those that have no content: parts
// itself when every part has content, else a copy. A remote agent's answer
// is not ours to refuse, but a part without content cannot be written and
// read back, so it is left out of what is kept.
func keepContent(parts a2a.ContentParts) a2a.ContentParts {
	if a2ajson.EmptyPart(parts) < 0 {
		return parts
	}
	out := make(a2a.ContentParts, 0, len(parts))
	for _, p := range parts {
		if a2ajson.HasContent(p) {
			out = append(out, p)
		}
	}
	return out
}

// messageContent returns m, or a copy of it holding only the parts with
// content.
func messageContent(m *a2a.Message) *a2a.Message {
	if m == nil || a2ajson.EmptyPart(m.Parts) < 0 {
		return m
	}
	c := *m
	c.Parts = keepContent(m.Parts)
	return &c
}

// artifactContent returns a, or a copy of it holding only the parts with
// content.
func artifactContent(a *a2a.Artifact) *a2a.Artifact {
	if a == nil || a2ajson.EmptyPart(a.Parts) < 0 {
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
