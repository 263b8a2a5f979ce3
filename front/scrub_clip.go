package front

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// clip returns str scrubbed and at most n runes long. A string cut short
// loses its last, partial word too, so that no part of a URL or hostname
// survives that the scrubber would not recognise; and the cut string is
// scrubbed again, because what was a public URL may end, once cut, on a
// private name.
func (s *Scrubber) clip(str string, n int) string {
	str = s.String(cutWords(str, n))
	if utf8.RuneCountInString(str) > n { // a replacement made it longer
		str = s.String(cutWords(str, n))
	}
	return str
}

// cutWords returns str if it is at most n runes long, and otherwise its
// first n runes without the word the cut falls in, if any, and without
// trailing space.
func cutWords(str string, n int) string {
	if utf8.RuneCountInString(str) <= n {
		return str
	}
	i, count := 0, 0
	for i < len(str) && count < n {
		_, size := utf8.DecodeRuneInString(str[i:])
		i += size
		count++
	}
	next, _ := utf8.DecodeRuneInString(str[i:])
	cut := str[:i]
	if !unicode.IsSpace(next) {
		j := strings.LastIndexFunc(cut, unicode.IsSpace)
		if j < 0 {
			return ""
		}
		cut = cut[:j]
	}
	return strings.TrimRightFunc(cut, unicode.IsSpace)
}
