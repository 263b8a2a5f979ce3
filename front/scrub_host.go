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

// numericName reports whether host, as hostKey leaves it, ends in an
// all-digit label without being an IP address. No DNS name does: top-level
// domains are not all-numeric (RFC 3696, section 2).
func numericName(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil || host == "" {
		return false
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	return last != "" && strings.Trim(last, "0123456789") == ""
}
