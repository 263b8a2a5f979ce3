package netguard_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/netguard"
)

func TestSpecial(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		special bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"100.100.100.200", true}, {"0.0.0.0", true},
		{"224.0.0.1", true}, {"255.255.255.255", true}, {"::1", true}, {"::", true}, {"fe80::1", true},
		{"fd00:ec2::254", true}, {"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true}, {"64:ff9b::a00:1", true},
		{"2002:7f00:1::", true}, {"ff02::1", true}, {"::7f00:1", true}, {"fec0::1", true},
		{"::1%lo", true}, {"fe80::1%eth0", true}, {"fd00:ec2::254%eth0", true}, {"2606:4700:4700::1111%eth0", false},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"172.32.0.1", false}, {"93.184.216.34", false},
		{"2606:4700:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		if got := netguard.Special(netip.MustParseAddr(tc.ip)); got != tc.special {
			t.Errorf("Special(%s) = %v, want %v", tc.ip, got, tc.special)
		}
	}
}

// TestRefusals checks that the guarded client refuses private targets
// before connecting, however they are named.
func TestRefusals(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	c := netguard.NewClient(netguard.Options{})
	for _, target := range []string{
		srv.URL,                                    // 127.0.0.1
		"http://localhost:" + port,                 // a name that resolves to loopback
		"http://[::ffff:127.0.0.1]:" + port,        // IPv4-mapped loopback
		"http://169.254.169.254/latest/meta-data/", // cloud metadata
		"http://0.0.0.0:" + port,
		"http://[::1%25lo]:" + port, // a zone must not hide loopback
		"http://[fe80::1%25eth0]:" + port,
	} {
		_, err := c.Get(target)
		if !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("GET %s: %v, want ErrRefused", target, err)
		}
	}
	for _, bad := range []string{"ftp://example.com/", "http://user:pw@example.com/", "file:///etc/passwd", "http://[2606:4700::1%25eth0]/"} {
		if err := netguard.CheckURL(bad); !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("CheckURL(%s): %v", bad, err)
		}
	}
	if hit {
		t.Fatal("a refused request reached the server")
	}
}

func TestRedirectToPrivateRefused(t *testing.T) {
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the redirect target was reached")
	}))
	defer private.Close()
	u, _ := url.Parse(private.URL)
	// The first server is reachable (its exact address is allowed); it
	// redirects to another loopback address, which is not.
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:"+u.Port()+"/", http.StatusFound)
	}))
	defer public.Close()
	c := netguard.NewClient(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	_, err := c.Get(public.URL)
	if !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("redirect to a private address: %v", err)
	}
	// A redirect to a non-HTTP scheme is refused too.
	ftp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
	}))
	defer ftp.Close()
	if _, err := c.Get(ftp.URL); !errors.Is(err, netguard.ErrRefused) {
		t.Fatalf("redirect to ftp: %v", err)
	}
}

func TestAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	resp, err := netguard.NewClient(netguard.Options{AllowPrivate: true}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestAllows: the check of one address agrees with the dialer's.
func TestAllows(t *testing.T) {
	for _, tc := range []struct {
		opts netguard.Options
		ip   string
		want bool
	}{
		{netguard.Options{}, "93.184.216.34", true},
		{netguard.Options{}, "127.0.0.1", false},
		{netguard.Options{}, "::ffff:10.0.0.1", false},
		{netguard.Options{}, "fe80::1%eth0", false},
		{netguard.Options{}, "169.254.169.254", false},
		{netguard.Options{AllowPrivate: true}, "127.0.0.1", true},
		{netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "127.0.0.1", true},
		{netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "10.0.0.1", false},
	} {
		if got := tc.opts.Allows(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("%+v allows %s: %v, want %v", tc.opts, tc.ip, got, tc.want)
		}
	}
}
