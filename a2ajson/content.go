package a2ajson

import (
	"reflect"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// HasContent reports whether p carries one content that can be written and
// read back: any text, bytes (empty ones too), a JSON value that is not
// null, or a non-empty URL. A 0.3 data part without data (or whose compat
// value is null) converts to a part with none of these; such a part must
// be refused where it arrives (or left out of what is kept), since once
// written it would not read back.
func HasContent(p *a2a.Part) bool {
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

// EmptyPart returns the index of the first part in parts without content
// (HasContent), or -1 when every part has one.
func EmptyPart(parts a2a.ContentParts) int {
	for i, p := range parts {
		if !HasContent(p) {
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
