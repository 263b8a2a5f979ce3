package front_test

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
)

func TestLeaks(t *testing.T) {
	s := newTestScrubber()
	tests := map[string]struct {
		card string
		want []string
	}{
		"Clean": {`{"name": "bot", "url": "https://sb.example.net/a/bot", "supportedInterfaces": [{"url": "https://sb.example.net/a/bot"}],
			"documentationUrl": "https://docs.example.org/", "description": "` + rmURL + ` and ` + rmHost + `"}`, []string{}},
		"Leaky": {`{"name": "bot on agent.acme.example", "skills": [{"examples": ["http://10.0.0.1/x."]}],
			"x": {"https://box.tail1234.ts.net/": 1}}`,
			[]string{"agent.acme.example", "http://10.0.0.1/x", "https://box.tail1234.ts.net/"}},
		"CredentialsMasked":            {`{"a": "https://user:secret@docs.example.org/x"}`, []string{"https://***@docs.example.org/x"}},
		"CredentialsMaskedUnparseable": {`{"a": "https://user:secret@[fe80::1%en0]/x"}`, []string{"https://***@[fe80::1%en0]/x"}},
		"Repeats":                      {`["http://10.0.0.1", "http://10.0.0.1"]`, []string{"http://10.0.0.1"}},
		"NotJSON":                      {`{`, []string{"the card is not valid JSON"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := front.Leaks([]byte(tt.card), s); !slices.Equal(got, tt.want) {
				t.Errorf("Leaks = %q, want %q", got, tt.want)
			}
		})
	}
}

// An upstream named by one label (a Compose service) does not make the
// words of the card Switchboard writes leaks.
func TestLeaksSingleLabelUpstream(t *testing.T) {
	s := front.NewScrubber("https://sb.example.net/a/agent", "http://agent:8080/a2a", "http://agent:8080/.well-known/agent-card.json")
	card := `{"name": "agent", "url": "https://sb.example.net/a/agent", "protocolVersion": "0.3",
		"securitySchemes": {"bearer": {"description": "HTTP Bearer authentication. Ask the agent's owner for access."}},
		"x": "http://agent:8080/a2a"}`
	if got, want := front.Leaks([]byte(card), s), []string{"http://agent:8080/a2a"}; !slices.Equal(got, want) {
		t.Errorf("Leaks = %q, want %q", got, want)
	}
}

// TestLeaksNamesCredentials: a card that holds a value of the front's
// credentials (the owner's own text, say) is reported by the
// credential's name, never its value, and so is a URL that carries one.
func TestLeaksNamesCredentials(t *testing.T) {
	s := newTestScrubber().WithSecrets(front.CredentialSecrets(switchboard.FrontCredentials{
		Bearer: "owner-bearer-0123456789", Headers: map[string]string{"X-Key": "header-value-0123"}}))
	card := `{"name": "bot", "description": "call with owner-bearer-0123456789",
		"skills": [{"examples": ["http://10.0.0.1/x?k=header-value-0123", "` + base64.StdEncoding.EncodeToString([]byte("header-value-0123")) + `"]}]}`
	got := front.Leaks([]byte(card), s)
	want := []string{"http://10.0.0.1/x?k=" + front.CredentialRemoved, front.CredentialLeak("bearer"), front.CredentialLeak("header X-Key")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Leaks = %q, want %q", got, want)
	}
	if got := s.String("see owner-bearer-0123456789"); got != "see "+front.CredentialRemoved {
		t.Errorf("String = %q", got)
	}
}

// TestLeaksKeepOurGRPCTarget: a gRPC interface names the public address
// as host:port; on a machine where the upstream shares that host, it is
// ours, not a leak, while the upstream's own host:port still is.
func TestLeaksKeepOurGRPCTarget(t *testing.T) {
	s := front.NewScrubber("http://127.0.0.1:8080/a/bot", "https://127.0.0.1:9443/invoke")
	card := `{"supportedInterfaces":[{"url":"127.0.0.1:8080","protocolBinding":"GRPC","tenant":"bot"}]}`
	if got := front.Leaks([]byte(card), s); len(got) != 0 {
		t.Fatalf("our own gRPC target reported: %q", got)
	}
	card = `{"supportedInterfaces":[{"url":"127.0.0.1:9443","protocolBinding":"GRPC"}]}`
	if got := front.Leaks([]byte(card), s); len(got) == 0 {
		t.Fatal("the upstream's host:port is not reported")
	}
	s = front.NewScrubber("https://sb.example.com/a/bot", "https://sb.example.com:8443/invoke")
	if got := front.Leaks([]byte(`{"url":"sb.example.com:443"}`), s); len(got) != 0 {
		t.Fatalf("our own gRPC target on https's default port reported: %q", got)
	}
}
