package front

import (
	"net/netip"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

func TestCheckUpstream(t *testing.T) {
	closed := netguard.Options{}
	open := netguard.Options{AllowPrivate: true}
	tests := []struct {
		name, upstream, card string
		guard                netguard.Options
		ok                   bool
	}{
		{"https", "https://agent.example.com/a2a", "", closed, true},
		{"card on the origin", "https://agent.example.com/a2a", "https://agent.example.com/.well-known/agent-card.json", closed, true},
		{"card elsewhere", "https://agent.example.com/a2a", "https://other.example.com/card.json", closed, false},
		{"card on another port", "https://agent.example.com/a2a", "https://agent.example.com:8443/card.json", closed, false},
		{"plain http", "http://agent.example.com/a2a", "", closed, false},
		{"plain http, guard open", "http://agent.example.com/a2a", "", open, true},
		{"credentials", "https://user:pw@agent.example.com/a2a", "", closed, false},
		{"credentials, guard open", "https://user:pw@agent.example.com/a2a", "", open, false},
		{"loopback", "https://127.0.0.1/a2a", "", closed, false},
		{"loopback, guard open", "https://127.0.0.1/a2a", "", open, true},
		{"loopback allowed in tests", "https://127.0.0.1:8443/a2a", "", netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, true},
		{"private", "https://10.1.2.3/a2a", "", closed, false},
		{"ipv6 loopback", "https://[::1]/a2a", "", closed, false},
		{"metadata", "https://169.254.169.254/latest", "", closed, false},
		{"localhost", "https://localhost/a2a", "", closed, false},
		{"single label", "https://intranet/a2a", "", closed, false},
		{"tailnet", "https://box.tail1234.ts.net/a2a", "", closed, false},
		{"internal", "https://agent.corp.internal/a2a", "", closed, false},
		{"not a URL", "agent.example.com", "", closed, false},
		{"fragment", "https://agent.example.com/a2a#x", "", closed, false},
		{"other scheme", "ftp://agent.example.com/a2a", "", open, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckUpstream(tt.upstream, tt.card, tt.guard)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckUpstream(%q, %q) = %v, want ok %v", tt.upstream, tt.card, err, tt.ok)
			}
			if err != nil && switchboard.ErrorCode(err) != switchboard.EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
		})
	}
}

func TestCheckCredentials(t *testing.T) {
	tests := []struct {
		name string
		c    switchboard.FrontCredentials
		ok   bool
	}{
		{"none", switchboard.FrontCredentials{}, true},
		{"bearer", switchboard.FrontCredentials{Bearer: "abc.def"}, true},
		{"access pair", switchboard.FrontCredentials{Headers: map[string]string{"CF-Access-Client-Id": "a", "CF-Access-Client-Secret": "b"}}, true},
		{"newline in bearer", switchboard.FrontCredentials{Bearer: "a\r\nX-Evil: 1"}, false},
		{"newline in value", switchboard.FrontCredentials{Headers: map[string]string{"X-Key": "a\nb"}}, false},
		{"authorization header", switchboard.FrontCredentials{Headers: map[string]string{"authorization": "Bearer x"}}, false},
		{"peer header", switchboard.FrontCredentials{Headers: map[string]string{"X-A2A-Peer": "someone"}}, false},
		{"host header", switchboard.FrontCredentials{Headers: map[string]string{"Host": "evil"}}, false},
		{"bad name", switchboard.FrontCredentials{Headers: map[string]string{"X Key": "v"}}, false},
		{"colon name", switchboard.FrontCredentials{Headers: map[string]string{"X-Key:": "v"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkCredentials(tt.c); (err == nil) != tt.ok {
				t.Fatalf("checkCredentials = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
