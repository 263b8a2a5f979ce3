package a2abind

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ProtoJSON parsers accept a field by its proto name as well as by its
// JSON name (message_id as messageId), and A2A clients send either; the
// a2a-go SDK's HTTP+JSON transport reads JSON names only. jsonFieldNames
// rewrites a request body's proto names to JSON names before the
// transport reads it, leaving the values of free-form fields (metadata,
// a part's data) as they came. A body that names no field with an
// underscore is returned as it is, without being decoded; so is one that
// is not JSON, for the transport to refuse.
func jsonFieldNames(body []byte) []byte {
	if !hasSnakeKey(body) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return body
	}
	out, err := json.Marshal(renameKeys(v))
	if err != nil {
		return body
	}
	return out
}

// hasSnakeKey reports whether body may hold a key with an underscore: a
// quoted string with one, followed by a colon. It may report true for a
// value; it never reports false for a key.
func hasSnakeKey(body []byte) bool {
	for i := bytes.IndexByte(body, '_'); i >= 0; {
		end := bytes.IndexByte(body[i:], '"')
		if end < 0 {
			return false
		}
		rest := bytes.TrimLeft(body[i+end+1:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return true
		}
		next := bytes.IndexByte(body[i+1:], '_')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// freeForm are the fields whose values are the sender's own JSON, whose
// keys are not A2A's.
var freeForm = map[string]bool{"metadata": true, "data": true}

// renameKeys returns v with every object key in snake case in lower camel
// case, but under the free-form fields.
func renameKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			name := lowerCamel(k)
			if freeForm[name] {
				out[name] = val
				continue
			}
			if _, taken := v[name]; taken && name != k {
				name = k // both spellings: the JSON name wins, as the transport reads it
			}
			out[name] = renameKeys(val)
		}
		return out
	case []any:
		for i := range v {
			v[i] = renameKeys(v[i])
		}
		return v
	}
	return v
}

// lowerCamel returns message_id as messageId; a name without an
// underscore as it is.
func lowerCamel(k string) string {
	if !strings.Contains(k, "_") {
		return k
	}
	var b strings.Builder
	up := false
	for _, r := range k {
		switch {
		case r == '_':
			up = b.Len() > 0
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
