package oauthhttp

import (
	"testing"

	"github.com/switchboard-dev/switchboard"
)

func TestParseOAuthForm(t *testing.T) {
	for _, c := range []struct {
		ct, body, key, want string
		ok                  bool
	}{
		{"application/x-www-form-urlencoded", "client_name=Barry&client_name=Other", "client_name", "Barry", true},
		{"", "grant_type=x", "grant_type", "x", true},
		{"application/json; charset=utf-8", `{"client_id":"c","agent_card_url":null}`, "client_id", "c", true},
		{"application/json", `{"client_id":1}`, "", "", false},
		{"application/json", `[1]`, "", "", false},
		{"application/json", `{`, "", "", false},
		{"application/x-www-form-urlencoded", "a=%zz", "", "", false},
	} {
		v, err := parseOAuthForm(c.ct, []byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("parseOAuthForm(%q, %q): %v", c.ct, c.body, err)
			continue
		}
		if err != nil && switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("parseOAuthForm(%q): %v, want EINVALID", c.body, err)
		}
		if c.ok && v.Get(c.key) != c.want {
			t.Errorf("parseOAuthForm(%q)[%s] = %q, want %q", c.body, c.key, v.Get(c.key), c.want)
		}
	}
}

// FuzzParseOAuthForm: any body either parses or is EINVALID, never a panic
// or another error.
func FuzzParseOAuthForm(f *testing.F) {
	for _, s := range []string{"client_name=Barry", `{"client_id":"c"}`, `{"a":[1]}`, "a=%zz", "", "null"} {
		f.Add("application/json", s)
		f.Add("application/x-www-form-urlencoded", s)
	}
	f.Fuzz(func(t *testing.T, ct, body string) {
		if _, err := parseOAuthForm(ct, []byte(body)); err != nil && switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Fatalf("parseOAuthForm(%q, %q): %v", ct, body, err)
		}
	})
}
