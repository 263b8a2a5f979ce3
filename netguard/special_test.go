package netguard_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/netguard"
)

// specialRanges lists each range of the IANA special-purpose registries
// (and the other ranges the guard refuses) with addresses inside it, which
// are refused, and addresses just outside it, which are not (where the
// neighbours are public at all).
var specialRanges = []struct {
	name    string
	inside  []string
	outside []string
}{
	// IPv4 (RFC 6890 and the IANA IPv4 Special-Purpose Address Registry).
	{"0.0.0.0/8 this network", []string{"0.0.0.0", "0.255.255.255"}, []string{"1.0.0.0"}},
	{"10.0.0.0/8 private", []string{"10.0.0.0", "10.255.255.255"}, []string{"9.255.255.255", "11.0.0.0"}},
	{"100.64.0.0/10 shared (CGNAT)", []string{"100.64.0.0", "100.100.100.200", "100.127.255.255"}, []string{"100.63.255.255", "100.128.0.0"}},
	{"127.0.0.0/8 loopback", []string{"127.0.0.1", "127.255.255.255"}, []string{"126.255.255.255", "128.0.0.0"}},
	{"169.254.0.0/16 link-local", []string{"169.254.0.0", "169.254.169.254", "169.254.255.255"}, []string{"169.253.255.255", "169.255.0.0"}},
	{"172.16.0.0/12 private", []string{"172.16.0.0", "172.31.255.255"}, []string{"172.15.255.255", "172.32.0.0"}},
	{"192.0.0.0/24 IETF protocol assignments", []string{"192.0.0.0", "192.0.0.9", "192.0.0.170", "192.0.0.255"}, []string{"191.255.255.255", "192.0.1.0"}},
	{"192.0.2.0/24 TEST-NET-1", []string{"192.0.2.0", "192.0.2.255"}, []string{"192.0.1.255", "192.0.3.0"}},
	{"192.31.196.0/24 AS112-v4", []string{"192.31.196.0", "192.31.196.1", "192.31.196.255"}, []string{"192.31.195.255", "192.31.197.0"}},
	{"192.52.193.0/24 AMT", []string{"192.52.193.0", "192.52.193.255"}, []string{"192.52.192.255", "192.52.194.0"}},
	{"192.88.99.0/24 6to4 relay anycast", []string{"192.88.99.0", "192.88.99.1", "192.88.99.255"}, []string{"192.88.98.255", "192.88.100.0"}},
	{"192.168.0.0/16 private", []string{"192.168.0.0", "192.168.255.255"}, []string{"192.167.255.255", "192.169.0.0"}},
	{"192.175.48.0/24 AS112 direct delegation", []string{"192.175.48.0", "192.175.48.1", "192.175.48.255"}, []string{"192.175.47.255", "192.175.49.0"}},
	{"198.18.0.0/15 benchmarking", []string{"198.18.0.0", "198.19.255.255"}, []string{"198.17.255.255", "198.20.0.0"}},
	{"198.51.100.0/24 TEST-NET-2", []string{"198.51.100.0", "198.51.100.255"}, []string{"198.51.99.255", "198.51.101.0"}},
	{"203.0.113.0/24 TEST-NET-3", []string{"203.0.113.0", "203.0.113.255"}, []string{"203.0.112.255", "203.0.114.0"}},
	{"224.0.0.0/4 multicast", []string{"224.0.0.0", "224.0.0.1", "239.255.255.255"}, []string{"223.255.255.255"}},
	{"240.0.0.0/4 reserved", []string{"240.0.0.0", "254.255.255.255"}, nil},
	{"255.255.255.255/32 limited broadcast", []string{"255.255.255.255"}, nil},

	// IPv6 outside 2000::/3, the only global unicast space: all refused,
	// but for NAT64 addresses of public IPv4 addresses (below).
	{"::/128 unspecified", []string{"::"}, nil},
	{"::1/128 loopback", []string{"::1"}, nil},
	{"::/96 IPv4-compatible (deprecated)", []string{"::a00:1", "::808:808", "::a9fe:a9fe"}, nil},
	{"::ffff:0:0:0/96 IPv4-translated", []string{"::ffff:0:a9fe:a9fe", "::ffff:0:a00:1", "::ffff:0:808:808", "::ffff:0:0:0"}, nil},
	{"64:ff9b:1::/48 local-use NAT64", []string{"64:ff9b:1::", "64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"}, nil},
	{"100::/64 discard-only", []string{"100::", "100::ffff:ffff:ffff:ffff"}, nil},
	{"100:0:0:1::/64 dummy prefix", []string{"100:0:0:1::1"}, nil},
	{"5f00::/16 SRv6 SIDs", []string{"5f00::", "5f00:ffff::1"}, nil},
	{"fc00::/7 unique local", []string{"fc00::", "fd00:ec2::254", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
	{"fe80::/10 link-local", []string{"fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
	{"fec0::/10 site-local (deprecated)", []string{"fec0::1", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
	{"ff00::/8 multicast", []string{"ff00::", "ff02::1", "ff0e::101", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, nil},
	{"outside 2000::/3", []string{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::1", "e000::1"}, []string{"2000::1", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},

	// IPv6 inside 2000::/3.
	{"2001::/23 IETF protocol assignments", []string{
		"2001::", "2001::1", // Teredo 2001::/32
		"2001:1::1", "2001:1::2", "2001:1::3", // PCP, TURN and DNS-SD anycast
		"2001:2::1",                 // benchmarking 2001:2::/48
		"2001:3::1",                 // AMT 2001:3::/32
		"2001:4:112::1",             // AS112-v6 2001:4:112::/48
		"2001:10::1",                // deprecated ORCHID 2001:10::/28
		"2001:20::1",                // ORCHIDv2 2001:20::/28
		"2001:30::1",                // drone remote ID 2001:30::/28
		"2001:1ff:ffff::1",          // the end of the block
		"2001:0:a9fe:a9fe::1",       // a Teredo address of a server behind 169.254.169.254
		"2001:0:808:808::f7f7:f7f7", // one of a public server: refused all the same
	}, []string{"2001:200::1", "2001:4860:4860::8888", "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
	{"2001:db8::/32 documentation", []string{"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}, []string{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"}},
	{"2002::/16 6to4", []string{"2002::", "2002:a9fe:a9fe::1", "2002:7f00:1::", "2002:808:808::1", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, []string{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2003::1"}},
	{"2620:4f:8000::/48 AS112 direct delegation", []string{"2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"}, []string{"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8001::"}},
	{"3fff::/20 documentation", []string{"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"}, []string{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::"}},
}

func TestSpecialRanges(t *testing.T) {
	for _, r := range specialRanges {
		for _, ip := range r.inside {
			if !netguard.Special(netip.MustParseAddr(ip)) {
				t.Errorf("%s: %s is allowed, want refused", r.name, ip)
			}
		}
		for _, ip := range r.outside {
			if netguard.Special(netip.MustParseAddr(ip)) {
				t.Errorf("%s: %s (just outside) is refused, want allowed", r.name, ip)
			}
		}
	}
}

// TestSpecialEmbeddedIPv4: an IPv4 address spelled as IPv6 is judged by the
// IPv4 address it reaches. IPv4-mapped (::ffff:a.b.c.d) and NAT64
// (64:ff9b::a.b.c.d, RFC 6052) addresses of public IPv4 addresses stay
// reachable: on an IPv6-only network with DNS64 they are how every IPv4
// server is reached.
func TestSpecialEmbeddedIPv4(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		special bool
	}{
		{"::ffff:10.0.0.1", true}, {"::ffff:a00:1", true}, {"::ffff:169.254.169.254", true}, {"::ffff:a9fe:a9fe", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:100.64.0.1", true}, {"::ffff:192.0.0.170", true}, {"::ffff:255.255.255.255", true},
		{"::ffff:0.0.0.0", true}, {"::ffff:8.8.8.8", false}, {"::ffff:1.1.1.1", false},

		{"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::169.254.169.254", true}, {"64:ff9b::10.0.0.1", true}, {"64:ff9b::127.0.0.1", true},
		{"64:ff9b::192.168.1.1", true}, {"64:ff9b::100.64.0.1", true}, {"64:ff9b::0.0.0.0", true}, {"64:ff9b::224.0.0.1", true},
		{"64:ff9b::192.0.0.170", true}, {"64:ff9b::8.8.8.8", false}, {"64:ff9b::808:808", false}, {"64:ff9b::1.1.1.1", false},
		{"64:ff9b::1:0:0", true}, // beyond the /96: no IPv4 address is embedded there

		{"::ffff:0:a9fe:a9fe", true}, {"::ffff:0:10.0.0.1", true}, {"::ffff:0:8.8.8.8", true}, // IPv4-translated: refused whole
		{"::10.0.0.1", true}, {"::8.8.8.8", true}, // IPv4-compatible: refused whole
	} {
		if got := netguard.Special(netip.MustParseAddr(tc.ip)); got != tc.special {
			t.Errorf("Special(%s) = %v, want %v", tc.ip, got, tc.special)
		}
	}
}

// TestSpecialPublicStaysReachable: public addresses, in both families, are
// not refused.
func TestSpecialPublicStaysReachable(t *testing.T) {
	for _, ip := range []string{
		"8.8.8.8", "1.1.1.1", "9.9.9.9", "93.184.216.34", "100.63.255.255", "192.0.1.1", "192.31.197.1", "223.255.255.254",
		"2001:4860:4860::8888", "2001:4860::8888", "2606:4700:4700::1111", "2a00:1450:4001:81c::200e", "2c0f:fb50:4003::1",
		"2001:200:dff:fff1:216:3eff:feb1:44d7", "2400:cb00::1", "2003::1",
	} {
		if netguard.Special(netip.MustParseAddr(ip)) {
			t.Errorf("public address %s is refused", ip)
		}
	}
}

// TestRefusesTranslatedSpellings: the guarded client refuses the IPv6
// spellings of the metadata address at dial time.
func TestRefusesTranslatedSpellings(t *testing.T) {
	c := netguard.NewClient(netguard.Options{Timeout: 2 * time.Second})
	for _, target := range []string{
		"http://[::ffff:0:a9fe:a9fe]/latest/meta-data/",
		"http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"http://[2002:a9fe:a9fe::1]/latest/meta-data/",
		"http://[::a9fe:a9fe]/latest/meta-data/",
	} {
		if _, err := c.Get(target); !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("GET %s: %v, want ErrRefused", target, err)
		}
	}
}
