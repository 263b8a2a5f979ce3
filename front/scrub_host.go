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
