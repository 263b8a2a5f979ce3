package front

import (
	"net/netip"
	"strings"
)

// hostKey returns host in the form hosts are compared in: lower case,
// without a trailing dot or brackets, and an IP address in its canonical
// form.
func hostKey(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// wordName reports whether host, as hostKey leaves it, is scrubbed where
// it stands as a word: an IP address, or a name with a dot in it whose
// last label is not all digits. A single label is no address outside its
// network, and a dotted name ending in digits that is not an IP address
// ("127.1", which resolvers may read as one) is no DNS name: top-level
// domains are not all-numeric (RFC 3696, section 2). As words, both are
// mostly numbers and everyday words.
func wordName(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	dot := strings.LastIndexByte(host, '.')
	return dot > 0 && strings.Trim(host[dot+1:], "0123456789") != ""
}
