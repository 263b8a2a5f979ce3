package a2arpc

import (
	"bytes"
	"encoding/json"
)

// scanEnvelope takes the common request, a JSON object whose keys hold no
// escapes, with jsonrpc "2.0", a valid id or none, and a method that is a
// plain non-empty string, in two passes over body without allocating a
// map or copying the params (they stay a part of body). ok is false for
// any other body, which decodeEnvelope then decodes, or refuses; for what
// it takes, it returns what decodeEnvelope would (FuzzDecodeEnvelope
// compares the two).
func scanEnvelope(body []byte) (req *Request, ok bool) {
	obj := bytes.TrimSpace(body)
	if len(obj) < 2 || obj[0] != '{' || !json.Valid(obj) {
		return nil, false
	}
	var jsonrpc, id, method, params []byte
	if !members(obj, func(key, value []byte) {
		switch string(key) {
		case "jsonrpc":
			jsonrpc = value
		case "id":
			id = value
		case "method":
			method = value
		case "params":
			params = value
		}
	}) {
		return nil, false
	}
	if string(jsonrpc) != `"2.0"` || len(method) < 3 || method[0] != '"' || !plainASCII(method) {
		return nil, false
	}
	req = &Request{ID: NullID, Method: string(method[1 : len(method)-1]), Params: params}
	if id != nil {
		if !ValidID(id) {
			return nil, false
		}
		req.ID = id
	}
	return req, true
}

// plainASCII reports whether s holds only ASCII and no escape: a string
// json.Unmarshal would decode to its bytes as they are.
func plainASCII(s []byte) bool {
	for _, c := range s {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// members calls fn with the key (without its quotes) and the value of
// each member of obj, a JSON object that json.Valid accepted, in order;
// it returns false, having stopped, at a key that holds an escape.
func members(obj []byte, fn func(key, value []byte)) bool {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] != '"' {
			return false
		}
		end := i + 1
		for end < len(obj) && obj[end] != '"' {
			if obj[end] == '\\' {
				return false
			}
			end++
		}
		key := obj[i+1 : min(end, len(obj))]
		i = skipSpace(obj, end+1) // at the colon
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		if vend > len(obj) {
			return false
		}
		fn(key, obj[i:vend])
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return i < len(obj)
}

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just after the JSON value that starts at
// b[i] (valid JSON).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b) + 1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b) + 1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// skipString returns the index just after the JSON string that starts at
// b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b) + 1
}
