package switchboard

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
)

// NewID returns a new random UUID (version 7: a millisecond timestamp then
// random bits), so that ids sort roughly by creation time and index well.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	b[6] = (b[6] & 0x0f) | 0x70 // version 7
	b[8] = (b[8] & 0x3f) | 0x80 // RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// IsUUID reports whether s has the textual shape of a UUID
// (8-4-4-4-12 hexadecimal digits).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// MaxHandleLen is the longest handle: one DNS label.
const MaxHandleLen = 63

// NormalizeHandle lowercases a handle and checks that it is a DNS label:
// 1 to 63 characters of a-z, 0-9 and '-', neither starting nor ending with
// '-'. A handle that looks like a UUID is refused, because addresses and
// management routes accept either an id or a handle in the same place.
// Space around it is trimmed first; a control or bidirectional formatting
// character left in it is EUNPROCESSABLE (CheckName), any other fault
// EINVALID.
func NormalizeHandle(h string) (string, error) {
	h = strings.ToLower(strings.TrimSpace(h))
	if err := CheckName("handle", h); err != nil {
		return "", err
	}
	if h == "" {
		return "", Errorf(EINVALID, "handle is required")
	}
	if len(h) > MaxHandleLen {
		return "", Errorf(EINVALID, "handle is longer than %d characters", MaxHandleLen)
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-'
		if !ok {
			return "", Errorf(EINVALID, "handle %q may only hold a-z, 0-9 and '-'", h)
		}
	}
	if h[0] == '-' || h[len(h)-1] == '-' {
		return "", Errorf(EINVALID, "handle %q may not start or end with '-'", h)
	}
	if IsUUID(h) {
		return "", Errorf(EINVALID, "handle %q may not look like a UUID", h)
	}
	return h, nil
}

// MaxRefLen is the longest client-chosen id (context ids, push config ids).
const MaxRefLen = 128

// ValidRef reports whether s is an acceptable client-chosen identifier:
// 1 to 128 characters of A-Z, a-z, 0-9 and "._:-". The rule keeps ids safe to
// log, to put in URLs and to compare byte for byte.
func ValidRef(s string) bool {
	if s == "" || len(s) > MaxRefLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
			c == '.' || c == '_' || c == ':' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// MaxLabelLen is the longest peer token label.
const MaxLabelLen = 64

// ValidLabel reports whether s is an acceptable token label: 1 to 64
// characters of A-Z, a-z, 0-9, '_' and '-'.
func ValidLabel(s string) bool {
	if s == "" || len(s) > MaxLabelLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
