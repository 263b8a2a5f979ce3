package a2ajson

import (
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The plain structs (decode.go) are filled in one pass over the bytes by
// scanner when the JSON is of the plainest form, as agents and the SDK
// write it: every key one of the struct's names, exactly and once, no
// null, strings of UTF-8 with JSON's escapes. Metadata and data parts are
// read as encoding/json reads a value into an interface; raw bytes,
// timestamps and push configurations are found by their brackets and
// handed to json.Unmarshal alone. On anything else (a key in other case,
// an unknown or repeated key, a null, a number where a string goes,
// invalid UTF-8, bytes after the value) the scanner gives up, and
// json.Unmarshal decodes the whole text into the plain structs instead.
// What the scanner decodes, json.Unmarshal decodes the same
// (FuzzScannerAsEncodingJSON); encoding/json reads a text twice
// (checkValid, then the value) and through reflection: at a front that
// was a sixth of the server's time.

// scanner reads JSON from b, at i.
type scanner struct {
	b []byte
	i int
}

// ws skips white space.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end reports whether nothing but white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// consume reads c, after white space.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, calling field for each key with the scanner at
// its value; field reads the value, or returns false. A key is its bytes
// as written: one with an escape is no struct's name, and is given up on
// as any unknown key is.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		if !s.consume('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' {
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		key := s.b[start:s.i]
		s.i++
		if !s.consume(':') || !field(key) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// array reads an array, calling elem with the scanner at each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	if s.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume(']')
	}
}

// once marks bit in seen; false if it was marked: a key named twice.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// str reads a string as encoding/json does, but gives up on invalid UTF-8.
func (s *scanner) str() (string, bool) {
	if !s.consume('"') {
		return "", false
	}
	for i := s.i; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			v := string(s.b[s.i:i])
			s.i = i + 1
			return v, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return s.strEscaped(i)
		}
	}
	return "", false
}

// strEscaped reads the rest of a string from i, where an escape or a byte
// outside printable ASCII is, as encoding/json's unquote does.
func (s *scanner) strEscaped(i int) (string, bool) {
	b := s.b
	out := make([]byte, 0, i-s.i+64)
	out = append(out, b[s.i:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return string(out), true
		case c == '\\':
			if i+1 == len(b) {
				return "", false
			}
			switch b[i+1] {
			case '"', '\\', '/':
				out = append(out, b[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, hex4(b[i:])); dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			out = append(out, b[i:i+size]...)
			i += size
		}
	}
	return "", false
}

// hex4 returns the rune of b's leading \uXXXX, or -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, true
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// maxValueDepth bounds the nesting of a value the scanner hands to
// json.Unmarshal alone: encoding/json refuses a text nested deeper than
// 10,000, counting the levels around the value, which the scanner's
// structs add (at most eight) and a value decoded alone would not.
const maxValueDepth = 9000

// value returns the bytes of the value at the scanner, found by its
// brackets and quotes alone, and moves past it; json.Unmarshal or
// json.Valid checks them after. A null is given up on.
func (s *scanner) value() ([]byte, bool) {
	s.ws()
	b, start, depth := s.b, s.i, 0
	i := start
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return nil, false
			}
			if depth == 0 {
				i++
				goto found
			}
		case '{', '[':
			if depth++; depth > maxValueDepth {
				return nil, false
			}
		case '}', ']':
			if depth == 0 {
				goto found
			}
			if depth--; depth == 0 {
				i++
				goto found
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				goto found
			}
		}
	}
found:
	if i == start || b[start] == 'n' {
		return nil, false
	}
	s.i = i
	return b[start:i], true
}

// decode reads the value at the scanner into v with json.Unmarshal.
func (s *scanner) decode(v any) bool {
	data, ok := s.value()
	return ok && json.Unmarshal(data, v) == nil
}

// metadata reads an object of any values.
func (s *scanner) metadata() (map[string]any, bool) {
	s.ws()
	if s.i == len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	v, ok := s.anyValue(0)
	m, _ := v.(map[string]any)
	return m, ok
}

// anyValue reads a value as encoding/json reads it into an interface:
// objects as map[string]any (of a key named twice, the later value),
// arrays as []any, numbers as float64, null as nil. depth is the number
// of objects and arrays around it, which maxValueDepth bounds.
func (s *scanner) anyValue(depth int) (any, bool) {
	s.ws()
	if s.i == len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '{', '[':
		if depth == maxValueDepth {
			return nil, false
		}
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		m := map[string]any{}
		if s.consume('}') {
			return m, true
		}
		for {
			k, ok := s.str()
			if !ok || !s.consume(':') {
				return nil, false
			}
			if m[k], ok = s.anyValue(depth + 1); !ok {
				return nil, false
			}
			if !s.consume(',') {
				return m, s.consume('}')
			}
		}
	case '[':
		s.i++
		a := []any{}
		if s.consume(']') {
			return a, true
		}
		for {
			v, ok := s.anyValue(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if !s.consume(',') {
				return a, s.consume(']')
			}
		}
	case '"':
		return s.str()
	case 't', 'f':
		return s.boolean()
	case 'n':
		if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
			s.i += 4
			return nil, true
		}
		return nil, false
	}
	n, ok := s.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(n, 64)
	return f, err == nil
}

// number reads a number of JSON's grammar and returns its text.
func (s *scanner) number() (string, bool) {
	s.ws()
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return "", false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return "", false
		}
	}
	n := string(b[s.i:i])
	s.i = i
	return n, true
}
