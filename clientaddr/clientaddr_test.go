package clientaddr_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/switchboard-dev/switchboard/clientaddr"
)

// proxies are the trusted ranges of the tests: a private IPv4 range, one
// IPv4 address and an IPv6 range.
var proxies = mustPrefixes("10.0.0.0/8, 192.0.2.7, fd00::/8")

func mustPrefixes(s string) []netip.Prefix {
	p, err := clientaddr.ParsePrefixes(s)
	if err != nil {
		panic(err)
	}
	return p
}

func TestResolve(t *testing.T) {
	res := clientaddr.New(proxies)
	for name, tt := range map[string]struct {
		remote string
		xff    []string
		want   string
	}{
		"NoHeader":              {"203.0.113.5:4000", nil, "203.0.113.5"},
		"SpoofedFromUntrusted":  {"203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		"SpoofedChainUntrusted": {"203.0.113.5:4000", []string{"198.51.100.1, 10.0.0.1"}, "203.0.113.5"},
		"TrustedProxy":          {"10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		"TrustedNoHeader":       {"10.1.2.3:5000", nil, "10.1.2.3"},
		"TrustedEmptyHeader":    {"10.1.2.3:5000", []string{""}, "10.1.2.3"},
		"ClientPrependsSpoof":   {"10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		"ChainOfProxies":        {"10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1, 192.0.2.7, 10.9.9.9"}, "198.51.100.1"},
		"SeveralHeaders":        {"10.1.2.3:5000", []string{"1.1.1.1", "198.51.100.1, 10.0.0.2"}, "198.51.100.1"},
		"AllTrusted":            {"10.1.2.3:5000", []string{"10.0.0.9, 10.0.0.8"}, "10.0.0.9"},
		"GarbageSkipped":        {"10.1.2.3:5000", []string{"198.51.100.1, not-an-ip, , unknown"}, "198.51.100.1"},
		"OnlyGarbage":           {"10.1.2.3:5000", []string{"garbage, ;;;"}, "10.1.2.3"},
		"PortInHeader":          {"10.1.2.3:5000", []string{"198.51.100.1:1234"}, "198.51.100.1"},
		"IPv6Peer":              {"[2001:db8::5]:443", []string{"198.51.100.1"}, "2001:db8::5"},
		"IPv6TrustedProxy":      {"[fd00::1]:443", []string{"2001:db8::9"}, "2001:db8::9"},
		"IPv6BracketsAndPort":   {"[fd00::1]:443", []string{"[2001:db8::9]:8443"}, "2001:db8::9"},
		"IPv6Brackets":          {"[fd00::1]:443", []string{"[2001:db8::9]"}, "2001:db8::9"},
		"IPv6Zone":              {"[fd00::1%eth0]:443", []string{"fe80::1%eth1"}, "fe80::1"},
		"IPv4Mapped":            {"[::ffff:10.0.0.1]:443", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		"IPv4MappedUntrusted":   {"[::ffff:203.0.113.5]:443", []string{"198.51.100.1"}, "203.0.113.5"},
		"PeerWithoutPort":       {"10.1.2.3", []string{"198.51.100.1"}, "198.51.100.1"},
		"PeerNotAnAddress":      {"pipe:1", []string{"198.51.100.1"}, "pipe"},
		"PeerEmpty":             {"", []string{"198.51.100.1"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := res.Resolve(tt.remote, tt.xff); got != tt.want {
				t.Fatalf("Resolve(%q, %q) = %q, want %q", tt.remote, tt.xff, got, tt.want)
			}
		})
	}
}

// TestResolveTrustsNoOne: without trusted proxies (a nil Resolver or an
// empty list), the header is never read.
func TestResolveTrustsNoOne(t *testing.T) {
	for name, res := range map[string]*clientaddr.Resolver{"Nil": nil, "Empty": clientaddr.New(nil)} {
		t.Run(name, func(t *testing.T) {
			if got, want := res.Resolve("10.1.2.3:5000", []string{"198.51.100.1"}), "10.1.2.3"; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestAddr(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:5000"
	r.Header.Add("X-Forwarded-For", "1.1.1.1")
	r.Header.Add("X-Forwarded-For", "198.51.100.1")
	if got, want := clientaddr.New(proxies).Addr(r), "198.51.100.1"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParsePrefixes(t *testing.T) {
	for in, want := range map[string][]netip.Prefix{
		"":                      nil,
		" , ":                   nil,
		"10.0.0.0/8":            {netip.MustParsePrefix("10.0.0.0/8")},
		"10.1.2.3/8,192.0.2.7":  {netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")},
		"fd00::/8, 2001:db8::1": {netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("2001:db8::1/128")},
		"::ffff:10.0.0.0/104":   {netip.MustParsePrefix("10.0.0.0/8")},
		"::ffff:192.0.2.7":      {netip.MustParsePrefix("192.0.2.7/32")},
	} {
		got, err := clientaddr.ParsePrefixes(in)
		if err != nil {
			t.Fatalf("ParsePrefixes(%q): %v", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("ParsePrefixes(%q) = %v, want %v", in, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("ParsePrefixes(%q) = %v, want %v", in, got, want)
			}
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.0/8,nope", "fe80::1%eth0"} {
		if _, err := clientaddr.ParsePrefixes(bad); err == nil {
			t.Errorf("ParsePrefixes(%q): no error", bad)
		}
	}
}

func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "192.0.2.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2::ffff":   "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"::1":                  "::/64",
		"not an address":       "not an address",
		"":                     "",
	} {
		if got := clientaddr.Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}
