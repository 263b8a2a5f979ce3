package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestTrustedProxiesFlag: --trusted-proxies and SWITCHBOARD_TRUSTED_PROXIES
// reach Config as ranges; none by default; a bad range is refused.
func TestTrustedProxiesFlag(t *testing.T) {
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("192.0.2.7/32")}
	if got := parseServe(t, "--trusted-proxies", "10.0.0.0/8, fd00::/8,192.0.2.7").TrustedProxies; !slices.Equal(got, want) {
		t.Fatalf("flag: %v, want %v", got, want)
	}
	if got := parseServe(t).TrustedProxies; got != nil {
		t.Fatalf("default: %v, want none", got)
	}
	var c CLI
	parser, err := kong.New(&c, kong.Vars{"default_data": t.TempDir()}, serveVars())
	must(t, err)
	if _, err := parser.Parse([]string{"serve", "--trusted-proxies", "10.0.0.0/8,proxy.example"}); err == nil || !strings.Contains(err.Error(), "trusted proxies") {
		t.Fatalf("a bad range: %v", err)
	}
	t.Setenv("SWITCHBOARD_TRUSTED_PROXIES", "fd00::/8")
	if got := parseServe(t).TrustedProxies; !slices.Equal(got, want[1:2]) {
		t.Fatalf("env: %v, want %v", got, want[1:2])
	}
}
