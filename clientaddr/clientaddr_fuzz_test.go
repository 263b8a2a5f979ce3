package clientaddr_test

import (
	"net/netip"
	"testing"

	"github.com/switchboard-dev/switchboard/clientaddr"
)

// FuzzResolve: whatever the peer and the header, Resolve does not panic;
// an untrusted peer is answered whatever the header says; a trusted
// peer's answer is a plain address, which one more trusted hop does not
// change and an untrusted address appended on the right replaces.
func FuzzResolve(f *testing.F) {
	f.Add("10.1.2.3:5000", "198.51.100.1, 10.0.0.2")
	f.Add("203.0.113.5:4000", "198.51.100.1")
	f.Add("[fd00::1%eth0]:443", "[2001:db8::9]:8443, garbage")
	f.Add("[::ffff:10.0.0.1]:1", "::ffff:198.51.100.1,,unknown")
	f.Add("", "")
	res := clientaddr.New(proxies)
	f.Fuzz(func(t *testing.T, remote, header string) {
		got := res.Resolve(remote, []string{header})
		direct := clientaddr.New(nil).Resolve(remote, []string{header})
		if direct != clientaddr.New(nil).Resolve(remote, nil) {
			t.Fatalf("an untrusted peer's header counted: %q", direct)
		}
		peer, err := netip.ParseAddr(direct)
		if err != nil || !trusted(peer) {
			if got != direct {
				t.Fatalf("Resolve(%q, %q) = %q for an untrusted peer, want %q", remote, header, got, direct)
			}
			return
		}
		if got == direct {
			return
		}
		a, err := netip.ParseAddr(got)
		if err != nil || a.Zone() != "" || a.Is4In6() {
			t.Fatalf("Resolve(%q, %q) = %q: not a plain address", remote, header, got)
		}
		if trusted(a) {
			return // every entry was a trusted proxy
		}
		if again := res.Resolve(remote, []string{header, "10.0.0.1"}); again != got {
			t.Fatalf("one more trusted hop changed the client: %q, then %q", got, again)
		}
		if last := res.Resolve(remote, []string{header + ",198.51.100.77"}); last != "198.51.100.77" {
			t.Fatalf("the right-most untrusted entry is not the client: %q", last)
		}
	})
}

// trusted reports whether a is in the tests' trusted ranges.
func trusted(a netip.Addr) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// FuzzKey: a key is the address itself for IPv4, a /64 that holds the
// address for IPv6, and the input unchanged for anything else; the key
// of a key is itself.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"192.0.2.7", "::ffff:192.0.2.7", "2001:db8:1:2:3:4:5:6", "fe80::1%eth0", "::", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := clientaddr.Key(s)
		a, err := netip.ParseAddr(s)
		switch {
		case err != nil:
			if k != s {
				t.Fatalf("Key(%q) = %q, want it unchanged", s, k)
			}
			return
		case a.Unmap().Is4():
			if k != a.Unmap().String() {
				t.Fatalf("Key(%q) = %q, want %s", s, k, a.Unmap())
			}
		default:
			p, err := netip.ParsePrefix(k)
			if err != nil || p.Bits() != 64 || !p.Contains(a.WithZone("")) {
				t.Fatalf("Key(%q) = %q, want the /64 that holds it", s, k)
			}
		}
		if again := clientaddr.Key(k); again != k {
			t.Fatalf("Key(Key(%q)) = %q, want %q", s, again, k)
		}
	})
}
