package netguard_test

import (
	"net/url"
	"testing"

	"github.com/switchboard-dev/switchboard/netguard"
)

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://hook.example/a", "https://hook.example/b?x=1", true},
		{"https://hook.example/a", "https://HOOK.example:443/b", true},
		{"http://hook.example/a", "http://hook.example:80/b", true},
		{"http://[::1]:8080/a", "http://[::1]:8080/b", true},
		{"https://hook.example/a", "http://hook.example/a", false},
		{"https://hook.example/a", "https://hook.example:8443/a", false},
		{"https://hook.example/a", "https://other.example/a", false},
		{"https://hook.example/a", "https://sub.hook.example/a", false},
		{"http://127.0.0.1:8080/a", "http://localhost:8080/a", false},
		{"http://hook.example:80/a", "https://hook.example:80/a", false},
	} {
		a, b := mustURL(t, tc.a), mustURL(t, tc.b)
		if got := netguard.SameOrigin(a, b); got != tc.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := netguard.SameOrigin(b, a); got != tc.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
