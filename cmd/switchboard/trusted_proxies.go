package main

import (
	"fmt"
	"net/netip"

	"github.com/switchboard-dev/switchboard/clientaddr"
)

// proxiesFlag is serve's --trusted-proxies: CIDR ranges, comma-separated.
type proxiesFlag struct {
	prefixes []netip.Prefix
}

// UnmarshalText implements encoding.TextUnmarshaler, for kong.
func (p *proxiesFlag) UnmarshalText(b []byte) error {
	prefixes, err := clientaddr.ParsePrefixes(string(b))
	if err != nil {
		return fmt.Errorf("trusted proxies: %w", err)
	}
	p.prefixes = prefixes
	return nil
}
