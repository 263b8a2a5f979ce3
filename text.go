package switchboard

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// CheckName returns nil when s may be kept as a name people read (of an
// agent, an account, a community, a skill or a tag, or a handle), and
// otherwise an EUNPROCESSABLE error that names field and the character.
// A name may not hold:
//
//   - NUL and the other C0 controls (U+0000–U+001F), DEL (U+007F) and the
//     C1 controls (U+0080–U+009F): they cut text short where it is passed
//     on (C strings, environment variables), move a terminal's cursor, and
//     PostgreSQL refuses a NUL;
//   - the bidirectional embeddings and overrides (U+202A–U+202E) and
//     isolates (U+2066–U+2069), which make text display in another order
//     than it is stored: a name that reads as another agent's;
//   - bytes that are not UTF-8.
//
// Every place that takes a name or a description from an owner checks it
// with these two functions, so the rule is one.
func CheckName(field, s string) error { return checkText(field, s, false) }

// CheckDescription is CheckName for text that may run over several lines
// (an agent's or a skill's description, a skill's example): a tab and a
// line feed are allowed in it; a carriage return, which a terminal uses
// to write over a line, is not.
func CheckDescription(field, s string) error { return checkText(field, s, true) }

// StripName returns s without the characters CheckName refuses: for text
// people read that comes from elsewhere (an upstream's agent card), which
// is cleaned rather than refused. Bytes that are not UTF-8 become U+FFFD.
func StripName(s string) string { return stripText(s, false) }

// StripDescription is StripName for text that may run over several lines:
// it keeps tabs and line feeds, as CheckDescription allows them.
func StripDescription(s string) string { return stripText(s, true) }

// stripText is StripName, keeping tab and line feed when multiline.
func stripText(s string, multiline bool) string {
	return strings.Map(func(r rune) rune {
		if forbiddenRune(r, multiline) != "" {
			return -1
		}
		return r
	}, s)
}

// checkText is CheckName, with tab and line feed allowed when multiline.
func checkText(field, s string, multiline bool) error {
	n := 0
	for i, r := range s {
		n++
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return Errorf(EUNPROCESSABLE, "%s is not UTF-8 text (byte %d)", field, i)
			}
		}
		if what := forbiddenRune(r, multiline); what != "" {
			return Errorf(EUNPROCESSABLE, "%s may not hold %s (%U, character %d)", field, what, r, n)
		}
	}
	return nil
}

// forbiddenRune says what kind of character r is when it may not be in a
// name (or, with multiline, a description), and "" when it may.
func forbiddenRune(r rune, multiline bool) string {
	switch {
	case multiline && (r == '\t' || r == '\n'):
		return ""
	case r == 0:
		return "a NUL"
	case r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f):
		return "a control character"
	case (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069):
		return "a bidirectional formatting character"
	}
	return ""
}

// CheckSkill checks the text of a card skill an owner sets, as CheckName
// and CheckDescription do: its id, name and tags are names, its
// description and examples may run over lines. field names the skill
// ("skills[2]"); the error names the part ("skills[2].tags[0]").
func CheckSkill(field string, sk *a2a.AgentSkill) error {
	for _, c := range []struct {
		part string
		text string
	}{{"id", sk.ID}, {"name", sk.Name}} {
		if err := CheckName(field+"."+c.part, c.text); err != nil {
			return err
		}
	}
	if err := CheckDescription(field+".description", sk.Description); err != nil {
		return err
	}
	for i, tag := range sk.Tags {
		if err := CheckName(fmt.Sprintf("%s.tags[%d]", field, i), tag); err != nil {
			return err
		}
	}
	for i, ex := range sk.Examples {
		if err := CheckDescription(fmt.Sprintf("%s.examples[%d]", field, i), ex); err != nil {
			return err
		}
	}
	return nil
}

// Truncate returns s cut to at most n bytes at the start of a character,
// followed by "…" when anything was cut: for messages and logs that quote
// what a peer, an upstream or an owner sent.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
