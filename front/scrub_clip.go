package front

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard"
)

// clip returns str scrubbed and at most n runes long. It scrubs before it
// cuts, so that no part of a URL or hostname survives that the scrubber
// would not recognise once cut; and scrubs what it cut again, because a
// public URL may end, once cut, on a private name ("https://10.0.0.1"
// from "https://10.0.0.1.nip.io"). A cut falls between words where it
// can.
func (s *Scrubber) clip(str string, n int) string {
	str = s.String(str)
	for range 3 {
		if utf8.RuneCountInString(str) <= n {
			return str
		}
		str = s.String(cutWords(str, n))
	}
	return ""
}

// name is clip for a one-line text of an upstream (a name, an id, a tag):
// without the characters switchboard.CheckName refuses (controls, NUL,
// bidirectional formatting), taken out before the text is scrubbed, so
// that none of them hides a URL or a host name from the scrubber.
func (s *Scrubber) name(str string, n int) string {
	return s.clip(switchboard.StripName(str), n)
}

// text is name for text that may run over lines (a description, an
// example): tabs and line feeds stay.
func (s *Scrubber) text(str string, n int) string {
	return s.clip(switchboard.StripDescription(str), n)
}

// cutWords returns str if it is at most n runes long, and otherwise its
// first n runes without trailing space and, when str has space in it,
// without the word the cut falls in.
func cutWords(str string, n int) string {
	if utf8.RuneCountInString(str) <= n {
		return str
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(str[i:])
		i += size
	}
	next, _ := utf8.DecodeRuneInString(str[i:])
	cut := str[:i]
	if !unicode.IsSpace(next) {
		if j := strings.LastIndexFunc(cut, unicode.IsSpace); j > 0 {
			cut = cut[:j]
		}
	}
	return strings.TrimRightFunc(cut, unicode.IsSpace)
}
