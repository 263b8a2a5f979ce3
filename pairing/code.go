package pairing

import (
	"crypto/rand"
	"encoding/base64"
	"github.com/switchboard-dev/switchboard/netguard"
	"math/big"
	"net/url"
	"strings"
	"unicode"

	"github.com/switchboard-dev/switchboard"
)

// userCodeLetters and userCodeDigits make user codes: four letters without
// vowels (no words) and four digits without 0 and 1 (no O/0, I/1 mix-ups),
// about 29 bits.
const (
	userCodeLetters = "BCDFGHJKLMNPQRSTVWXZ"
	userCodeDigits  = "23456789"
)

// Text bounds.
const (
	// MaxClientText is the longest client name or client id kept, in runes.
	MaxClientText = 64
	// MaxCardURL is the longest claimed card URL accepted, in bytes.
	MaxCardURL = 300
	// maxLabelBase is the longest label derived from a client's name.
	maxLabelBase = 24
	// defaultLabel is the label of a client that names itself nothing usable.
	defaultLabel = "paired-agent"
)

// newDeviceCode returns a new device code: 256 random bits, base64url.
func newDeviceCode() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// newUserCode returns a new user code as stored: four letters and four
// digits, without the dash.
func newUserCode() string {
	var b strings.Builder
	for i := range 8 {
		set := userCodeLetters
		if i >= 4 {
			set = userCodeDigits
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			panic(err)
		}
		b.WriteByte(set[n.Int64()])
	}
	return b.String()
}

// FormatUserCode returns a stored user code as it is shown: "WDJB-4827".
func FormatUserCode(code string) string {
	if len(code) != 8 {
		return code
	}
	return code[:4] + "-" + code[4:]
}

// NormalizeUserCode reads a user code as a human typed it: any case, with
// or without a dash or spaces. It returns the code as stored and reports
// whether it has the shape of one.
func NormalizeUserCode(s string) (string, bool) {
	if len(s) > 32 {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r == '-' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	code := b.String()
	if len(code) != 8 {
		return "", false
	}
	for i := range 8 {
		set := userCodeLetters
		if i >= 4 {
			set = userCodeDigits
		}
		if !strings.ContainsRune(set, rune(code[i])) {
			return "", false
		}
	}
	return code, true
}

// CleanText makes a client's claim about itself safe to store and show:
// control, format (bidi) and other invisible characters are dropped,
// whitespace runs become one space, and the result is cut to
// MaxClientText runes.
func CleanText(s string) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if n == MaxClientText {
			break
		}
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == unicode.ReplacementChar, !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
			if n == MaxClientText {
				break
			}
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// CardURLPrivate reports whether a claimed agent card URL names a private
// host (a tailnet name, a LAN address…): the approval page flags it as
// not publicly reachable, since no one outside that network can read it.
func CardURLPrivate(s string) bool {
	u, err := url.Parse(s)
	return err == nil && s != "" && netguard.PrivateHost(u.Hostname())
}

// CheckCardURL checks a client's claimed agent card URL: empty, or an
// absolute https URL without credentials of at most MaxCardURL bytes.
func CheckCardURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxCardURL {
		return switchboard.Errorf(switchboard.EINVALID, "agent_card_url is longer than %d bytes", MaxCardURL)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return switchboard.Errorf(switchboard.EINVALID, "agent_card_url must be an https URL")
	}
	if u.User != nil {
		return switchboard.Errorf(switchboard.EINVALID, "agent_card_url must not carry credentials")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return switchboard.Errorf(switchboard.EINVALID, "agent_card_url must be an https URL")
		}
	}
	return nil
}

// LabelBase derives a token label from what a client calls itself: its
// name, else its id, with every character outside [A-Za-z0-9_-] turned
// into "-", trimmed of dashes, at most 24 characters; "paired-agent" when
// nothing is left.
func LabelBase(name, id string) string {
	for _, s := range []string{name, id} {
		var b strings.Builder
		for _, r := range s {
			if b.Len() == maxLabelBase {
				break
			}
			if r < 128 && (r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
		if l := strings.Trim(b.String(), "-"); l != "" {
			return l
		}
	}
	return defaultLabel
}
