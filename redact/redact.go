package redact

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPreview is the most characters of peer text a wake carries.
const MaxPreview = 300

// Preview turns text a peer wrote into the preview a wake carries: what
// looks like a secret is cut to its first 4 characters and "…", long URL
// path segments and query values become "…", whitespace is collapsed, and
// the result is at most MaxPreview characters. The preview is still
// untrusted text: every wake marks it so.
//
// Only the first previewInputBytes of the text (in whole words) are looked
// at, so a preview costs the same for a 1 KiB message and a 1 MiB one.
func Preview(text string) string {
	// Whitespace is collapsed before the redaction too: a value runs to the
	// next ASCII space, and a preview of the preview must find the same
	// values (a vertical tab ends a word for Fields, not for the patterns).
	// A control character (NUL, which PostgreSQL's text refuses, among
	// them) separates words as a space does.
	s := strings.Join(strings.Fields(strings.Map(controlToSpace, leadingWords(text, previewInputBytes))), " ")
	s = strings.Join(strings.Fields(Secrets(s)), " ")
	if r := []rune(s); len(r) > MaxPreview {
		s = string(r[:MaxPreview-1]) + "…"
	}
	return s
}

// controlToSpace maps a control character (C0, DEL, C1) to a space.
func controlToSpace(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}

// previewInputBytes bounds the text a preview is made from: well above the
// longest preview (MaxPreview runes of up to 4 bytes), so a preview of a
// preview is the same preview.
const previewInputBytes = 2048

// leadingWords returns the words of text, joined by single spaces, while they
// fit in max bytes. A word that does not fit ends the text with "…": it is
// dropped whole, since a secret cut in half would escape redaction.
func leadingWords(text string, max int) string {
	if len(text) <= max {
		return text
	}
	var b strings.Builder
	for {
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
		if text == "" {
			return b.String()
		}
		end := strings.IndexFunc(text, unicode.IsSpace)
		if end < 0 {
			end = len(text)
		}
		sep := 0
		if b.Len() > 0 {
			sep = 1
		}
		if b.Len()+sep+end > max-len("…") {
			if sep == 1 {
				b.WriteByte(' ')
			}
			b.WriteString("…")
			return b.String()
		}
		if sep == 1 {
			b.WriteByte(' ')
		}
		b.WriteString(text[:end])
		text = text[end:]
	}
}

// secretNameWords are the words, lower case, that make a name one of a
// secret: the one list the pattern and the checks before it are built from.
var secretNameWords = []string{"authorization", "key", "token", "secret", "signature", "password", "passwd", "access-client-id", "cookie"}

var secretAfterNameExpr = `(?:` + strings.Join(secretNameWords, "|") + `)[A-Za-z0-9_.-]*(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?([^\s"',;&]+)`

var (
	// secretAfterName matches the end of "name: value" and "name=value"
	// where the name says it holds a secret: from the word in the name that
	// says so. nameStart finds where the name begins. (Matching the whole
	// name, with the pattern starting [A-Za-z0-9_.-]*, tries every position
	// of every word: ten times slower.)
	secretAfterName     = regexp.MustCompile(`(?i)` + secretAfterNameExpr)
	secretAfterNameHere = regexp.MustCompile(`(?i)^` + secretAfterNameExpr)
	// bearerCredential matches a credential after an auth scheme.
	bearerCredential = regexp.MustCompile(`(?i)\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})`)
	// knownToken matches tokens whose prefix says what they are.
	knownToken = regexp.MustCompile(`\b(?:sb[opaw]_|sk-|sk_live_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|eyJ)[A-Za-z0-9._~+/=-]{8,}`)
	// webURL matches http(s) URLs.
	webURL = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"']+`)
)

// Secrets cuts what looks like a secret in text: values of
// authorization, key, token, secret, signature, password and cookie
// fields (idempotency-key excepted), credentials after Bearer or Basic,
// tokens with well-known prefixes (Switchboard's own, API keys, JWTs), and,
// in URLs, credentials, query values and path segments of 16 characters or
// more.
//
// Each pattern runs only when the text holds a word it needs (a regular
// expression over a whole message costs ~100 µs a KiB; the check, ~1 µs).
func Secrets(text string) string {
	s := text
	if strings.Contains(foldCase(s), "http") {
		s = webURL.ReplaceAllStringFunc(s, redactURL) // may decode a host into words the checks below look for
	}
	lower := foldCase(s)
	if containsAny(lower, secretNameWords) {
		s = redactAssignments(s)
	}
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = bearerCredential.ReplaceAllStringFunc(s, func(m string) string {
			g := bearerCredential.FindStringSubmatch(m)
			return g[1] + " " + Cut(g[2])
		})
	}
	if containsAny(s, knownTokenPrefixes) {
		s = knownToken.ReplaceAllStringFunc(s, Cut)
	}
	return s
}

// knownTokenPrefixes are the literal starts of knownToken's prefixes.
var knownTokenPrefixes = []string{"sb", "sk-", "sk_live_", "ghp_", "gho_", "ghs_", "github_pat_", "xox", "AKIA", "eyJ"}

// redactAssignments cuts the values of the secret assignments in s.
func redactAssignments(s string) string {
	var b strings.Builder
	last := 0
	for {
		m := nextAssignment(s, last)
		if m == nil {
			break
		}
		start := nameStart(s, m[0], last)
		b.WriteString(s[last:start])
		last = m[1]
		name, sep := s[start:m[2]], s[m[2]:m[3]]
		if strings.EqualFold(name, "idempotency-key") {
			b.WriteString(s[start:m[1]])
			continue
		}
		b.WriteString(name)
		b.WriteString(sep)
		if m[4] >= 0 {
			b.WriteString(s[m[4]:m[5]])
			b.WriteByte(' ')
		}
		b.WriteString(Cut(s[m[6]:m[7]]))
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nextAssignment returns the submatch indexes in s of the first match of
// secretAfterName at or after from, or nil. In ASCII text a match can only
// begin where a secret name word does, so the pattern is tried there alone,
// anchored: a pattern that folds case costs ~100 ns a byte when it is tried
// at every position.
func nextAssignment(s string, from int) []int {
	if !isASCII(s) {
		m := secretAfterName.FindStringSubmatchIndex(s[from:])
		return shift(m, from)
	}
	for {
		at := nextSecretName(s, from)
		if at < 0 {
			return nil
		}
		if m := secretAfterNameHere.FindStringSubmatchIndex(s[at:]); m != nil {
			return shift(m, at)
		}
		from = at + 1
	}
}

// nextSecretName returns where the first secret name word at or after from
// begins in the ASCII text s, ignoring case, or -1.
func nextSecretName(s string, from int) int {
	for i := from; i < len(s); i++ {
		c := s[i] | 0x20 // lower case for letters
		if c != 'a' && c != 'k' && c != 't' && c != 's' && c != 'p' && c != 'c' {
			continue
		}
		for _, w := range secretNameWords {
			if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				return i
			}
		}
	}
	return -1
}

// shift adds off to every index of a match (-1, an unmatched group, stays).
func shift(m []int, off int) []int {
	for i := range m {
		if m[i] >= 0 {
			m[i] += off
		}
	}
	return m
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// nameStart returns where the name that holds s[at:] begins: the run of
// name characters ([A-Za-z0-9_.-], which under (?i) takes in the Kelvin
// sign and the long s) that ends at at, but not before min.
func nameStart(s string, at, min int) int {
	for at > min {
		r, n := utf8.DecodeLastRuneInString(s[min:at])
		if !isNameRune(r) {
			break
		}
		at -= n
	}
	return at
}

func isNameRune(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return r == '_' || r == '.' || r == '-' || r == '\u212A' || r == 'ſ'
}

// foldCase lower-cases s so that every text a (?i) pattern over ASCII words
// matches holds the lower-case word: besides A–Z, the Kelvin sign folds to k
// (ToLower does that) and the long s (ſ) to s.
func foldCase(s string) string {
	s = strings.ToLower(s)
	if strings.Contains(s, "ſ") {
		s = strings.ReplaceAll(s, "ſ", "s")
	}
	return s
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Cut keeps the first 4 characters of a secret, then "…".
func Cut(s string) string {
	if strings.HasSuffix(s, "…") {
		return s // already cut
	}
	r := []rune(s)
	if len(r) <= 4 {
		return "…"
	}
	return string(r[:4]) + "…"
}

// redactURL removes credentials and query values from a URL and shortens
// its long path segments.
func redactURL(raw string) string {
	// A URL redacted before holds "…" marks, which url.Parse refuses in
	// user info: give them as the escape they stand for, so that a
	// preview of a preview is the same preview.
	u, err := url.Parse(strings.ReplaceAll(raw, "…", "%E2%80%A6"))
	if err != nil {
		return "…"
	}
	out := strings.ToLower(u.Scheme) + "://"
	if u.User != nil {
		out += "…@"
	}
	out += u.Host
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if len([]rune(seg)) >= 16 {
			segs[i] = "…"
		}
	}
	out += strings.Join(segs, "/")
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		for i, kv := range q {
			if k, _, ok := strings.Cut(kv, "="); ok {
				q[i] = k + "=…"
			}
		}
		out += "?" + strings.Join(q, "&")
	}
	if u.Fragment != "" {
		out += "#…"
	}
	// A URL redacted before keeps its marks as they were.
	return strings.ReplaceAll(out, "%E2%80%A6", "…")
}
