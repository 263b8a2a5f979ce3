package front_test

import (
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/front"
)

const (
	testPublic   = "https://sb.example.net/a/bot"
	testUpstream = "https://agent.acme.example/a2a"
	testCardURL  = "https://agent.acme.example/.well-known/agent-card.json"
	testGRPC     = "https://rpc.acme-grpc.io:9000/"
)

func newTestScrubber() *front.Scrubber {
	return front.NewScrubber(testPublic, testUpstream, testCardURL, testGRPC)
}

const (
	rmURL  = front.URLRemoved
	rmHost = front.HostRemoved
)

func TestScrubberString(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"PlainText":           {"an agent that books rooms", "an agent that books rooms"},
		"PublicHTTPS":         {"see https://docs.example.org/x", "see https://docs.example.org/x"},
		"PublicWSS":           {"wss://stream.example.org/ws", "wss://stream.example.org/ws"},
		"PublicHTTP":          {"see http://docs.example.org/x", "see " + rmURL},
		"OtherScheme":         {"ftp://files.example.org/a", rmURL},
		"Credentials":         {"https://user:pass@docs.example.org/", rmURL},
		"UserOnly":            {"https://user@docs.example.org/", rmURL},
		"SingleLabel":         {"https://intranet/x", rmURL},
		"Localhost":           {"https://localhost:8080/", rmURL},
		"LocalhostSub":        {"https://app.localhost/", rmURL},
		"DotLocal":            {"https://printer.local/", rmURL},
		"DotLan":              {"https://nas.lan/", rmURL},
		"DotHome":             {"https://router.home/", rmURL},
		"DotInternal":         {"https://api.internal/", rmURL},
		"DotIntranet":         {"https://wiki.intranet/", rmURL},
		"DotCorp":             {"https://hr.corp/", rmURL},
		"HomeArpa":            {"https://nas.home.arpa/", rmURL},
		"TSNet":               {"https://box.tail1234.ts.net/a2a", rmURL},
		"RFC1918Ten":          {"https://10.1.2.3/", rmURL},
		"RFC1918SixteenLow":   {"https://172.16.0.1/", rmURL},
		"RFC1918SixteenHigh":  {"https://172.31.255.255/", rmURL},
		"PublicBeside172":     {"https://172.32.0.1/", "https://172.32.0.1/"},
		"RFC1918OneNineTwo":   {"https://192.168.1.1:8443/x", rmURL},
		"Loopback":            {"https://127.0.0.1/", rmURL},
		"LoopbackHigh":        {"https://127.255.0.9/", rmURL},
		"ThisNetwork":         {"https://0.0.0.0:8080/", rmURL},
		"LinkLocal":           {"https://169.254.169.254/latest/meta-data", rmURL},
		"CGNAT":               {"https://100.64.0.1/", rmURL},
		"CGNATHigh":           {"https://100.127.255.255/", rmURL},
		"PublicBesideCGNAT":   {"https://100.128.0.1/", "https://100.128.0.1/"},
		"IPv6Loopback":        {"https://[::1]:8080/", rmURL},
		"IPv6UniqueLocal":     {"https://[fc00::1]/", rmURL},
		"IPv6UniqueLocalFD":   {"https://[fd12:3456::1]/", rmURL},
		"IPv6LinkLocal":       {"https://[fe80::1]/", rmURL},
		"IPv6Mapped":          {"https://[::ffff:10.0.0.1]/", rmURL},
		"IPv6Public":          {"https://[2001:4860::1]/", "https://[2001:4860::1]/"},
		"IPv6Zone":            {"https://[2001:4860::1%25eth0]/", rmURL},
		"IPv6ZoneRaw":         {"https://[fe80::1%en0]/", rmURL},
		"Unparseable":         {"https://[::1/x", rmURL},
		"BadPort":             {"https://docs.example.org:http/", rmURL},
		"NoHost":              {"https://", rmURL},
		"BracketedInURL":      {"at https://[fd00::1]:8443/x.", "at " + rmURL + "."},
		"TrailingDot":         {"see https://10.0.0.1/x.", "see " + rmURL + "."},
		"TrailingParen":       {"(https://10.0.0.1/x)", "(" + rmURL + ")"},
		"TrailingMany":        {"https://10.0.0.1/x?!;", rmURL + "?!;"},
		"ParenKept":           {"https://en.wikipedia.org/wiki/A_(b)", "https://en.wikipedia.org/wiki/A_(b)"},
		"CommaKept":           {"https://docs.example.org/x, then", "https://docs.example.org/x, then"},
		"UpstreamOrigin":      {"https://agent.acme.example/other", rmURL},
		"UpstreamCardURL":     {testCardURL, rmURL},
		"UpstreamOtherScheme": {"wss://agent.acme.example/ws", rmURL},
		"UpstreamOtherPort":   {"https://agent.acme.example:8443/", rmURL},
		"UpstreamSubdomain":   {"https://docs.agent.acme.example/", rmURL},
		"UpstreamTrailingDot": {"https://agent.acme.example./", rmURL},
		"InterfaceOrigin":     {"https://rpc.acme-grpc.io:9000/x", rmURL},
		"UpstreamInPath":      {"https://docs.example.org/?h=agent.acme.example", rmURL},
		"NestedPrivateURL":    {"https://web.example.org/?u=http://10.0.0.1", rmURL},
		"BareUpstream":        {"call agent.acme.example now", "call " + rmHost + " now"},
		"BareUpstreamCase":    {"AGENT.Acme.Example.", rmHost + "."},
		"BareInterfaceHost":   {"rpc.acme-grpc.io:9000", rmHost + ":9000"},
		"BareUpstreamInWord":  {"myagent.acme.example", "myagent.acme.example"},
		"BareUpstreamLonger":  {"agent.acme.examples", "agent.acme.examples"},
		"BareUpstreamHyphen":  {"x-agent.acme.example", "x-" + rmHost},
		"BareTSNet":           {"on box.tail1234.ts.net today", "on " + rmHost + " today"},
		"BareTSNetCase":       {"Box.TS.NET", rmHost},
		"TSNetAlone":          {"Tailscale's ts.net", "Tailscale's ts.net"},
		"PublicOrigin":        {testPublic + "/x", testPublic + "/x"},
		"PublicOriginOther":   {"https://sb.example.net/other", "https://sb.example.net/other"},
		"PublicCredentials":   {"https://me:pw@sb.example.net/", rmURL},
		"URN":                 {"urn:ietf:params:a2a:ext", "urn:ietf:params:a2a:ext"},
		"Mailto":              {"mailto:ops@example.org", "mailto:ops@example.org"},
		"NoScheme":            {"at ://10.0.0.1/x", "at " + rmURL},
		"URLInAuthority":      {"https://docs.example.=http://127.0.0.1", rmURL},
		"OddHostChars":        {"https://docs.exa$mple.org/", rmURL},
		"MailtoUpstream":      {"mailto:ops@agent.acme.example", "mailto:ops@" + rmHost},
		"DecimalIP":           {"https://2130706433/", rmURL},
		"HexIP":               {"https://0x7f.0.0.1/", rmURL},
		"ShortIP":             {"https://127.1/", rmURL},
		"FullwidthDots":       {"https://10．0．0．1/", rmURL},
		"EscapedHost":         {"https://10%2e0%2e0%2e1/", rmURL},
		"UpperScheme":         {"HTTPS://10.0.0.1", rmURL},
		"Two":                 {"a https://10.0.0.1 b https://docs.example.org c", "a " + rmURL + " b https://docs.example.org c"},
		"Quoted":              {`"https://10.0.0.1"`, `"` + rmURL + `"`},
	}
	s := newTestScrubber()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := s.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScrubberStringPublicOnPrivateHost(t *testing.T) {
	s := front.NewScrubber("http://localhost:8080/a/bot", testUpstream)
	for in, want := range map[string]string{
		"http://localhost:8080/a/bot/x": "http://localhost:8080/a/bot/x",
		"ws://localhost:8080/a/bot":     "ws://localhost:8080/a/bot",
		"http://localhost:8081/":        rmURL,
	} {
		if got := s.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// A single label or a dotted number is no DNS name: URLs on it go, but
// the word or number stays.
func TestScrubberUndottedUpstream(t *testing.T) {
	s := front.NewScrubber(testPublic, "http://0:8080/a2a", "127.1", "10.0.0.7", "http://agent:9000/", "db.internal")
	for in, want := range map[string]string{
		"speaks A2A 0.3 and 1.0":      "speaks A2A 0.3 and 1.0",
		"see https://0:8080/x":        "see " + rmURL,
		"version 127.1 ships":         "version 127.1 ships",
		"runs on 10.0.0.7 today":      "runs on " + rmHost + " today",
		"https://docs.example/0.":     "https://docs.example/0.",
		"an agent that books rooms":   "an agent that books rooms",
		"https://agent/x and agent":   rmURL + " and agent",
		"https://docs.example/agent":  "https://docs.example/agent",
		"reads db.internal nightly":   "reads " + rmHost + " nightly",
		"https://docs.example/127.1/": "https://docs.example/127.1/",
	} {
		if got := s.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScrubberValue(t *testing.T) {
	s := newTestScrubber()
	in := map[string]any{
		"https://10.0.0.1/key": "v",
		"__proto__":            map[string]any{"polluted": "http://10.0.0.2"},
		"list":                 []any{"agent.acme.example", 1.5, true, nil},
	}
	got := s.Value(in)
	want := map[string]any{
		rmURL:       "v",
		"__proto__": map[string]any{"polluted": rmURL},
		"list":      []any{rmHost, 1.5, true, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Value = %#v, want %#v", got, want)
	}
}

func TestScrubberValueDepth(t *testing.T) {
	s := newTestScrubber()
	var v any = "http://10.0.0.1"
	for range 30 {
		v = []any{v}
	}
	got := s.Value(v)
	depth := 0
	for {
		arr, ok := got.([]any)
		if !ok {
			break
		}
		got = arr[0]
		depth++
	}
	if got != nil || depth != front.MaxScrubDepth+1 {
		t.Errorf("Value at depth %d = %v, want nil at depth %d", depth, got, front.MaxScrubDepth+1)
	}
}

func TestScrubberPublicURL(t *testing.T) {
	s := newTestScrubber()
	for in, want := range map[string]bool{
		"https://docs.example.org/x":   true,
		"https://sb.example.net/a/bot": true,
		"http://docs.example.org/x":    false,
		"wss://docs.example.org/x":     false,
		"https://docs.example.org/x.":  false,
		"https://docs.example.org/ x":  false,
		"https://10.0.0.1/":            false,
		"https://agent.acme.example/":  false,
		"docs.example.org":             false,
		"":                             false,
	} {
		if got := s.PublicURL(in); got != want {
			t.Errorf("PublicURL(%q) = %v, want %v", in, got, want)
		}
	}
}
