package certs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/certs"
)

// TestCheckDomain: a DNS name is taken in lower case without its final
// dot; an IP address, a wildcard, a port, a scheme, a path and a name of
// one label are refused, each saying which.
func TestCheckDomain(t *testing.T) {
	for in, want := range map[string]string{
		"Agents.Example.COM":    "agents.example.com",
		"agents.example.com.":   "agents.example.com",
		"xn--bcher-kva.example": "xn--bcher-kva.example",
		" a-b.c1.example ":      "a-b.c1.example",
	} {
		if got, err := certs.CheckDomain(in); err != nil || got != want {
			t.Errorf("CheckDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"192.0.2.1":                          "IP address",
		"::1":                                "IP address",
		"[2001:db8::1]":                      "IP address",
		"*.example.com":                      "DNS-01",
		"example.com:443":                    "has a port",
		"https://example.com":                "has a scheme",
		"http://example.com/x":               "has a scheme",
		"example.com/path":                   "without a path",
		"localhost":                          "single-label",
		"-bad.example":                       "not a valid DNS name",
		"bad_.example":                       "not a valid DNS name",
		"":                                   "empty",
		strings.Repeat("a", 64) + ".example": "not a valid DNS name",
	} {
		if _, err := certs.CheckDomain(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CheckDomain(%q): %v; want an error that says %q", in, err, why)
		}
	}
	got, err := certs.CheckDomains([]string{"B.example", "a.example", "b.example"})
	if err != nil || !slices.Equal(got, []string{"b.example", "a.example"}) {
		t.Fatalf("CheckDomains: %v %v", got, err)
	}
	if _, err := certs.CheckDomains([]string{"a.example", "*.b.example"}); err == nil || !strings.HasPrefix(err.Error(), "--domain: ") {
		t.Fatalf("CheckDomains names the flag: %v", err)
	}
}
