package wake_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// templateSeeds are the seeds of FuzzRenderTemplate, also run as a test.
var templateSeeds = []struct {
	tpl, value string
	ok         bool
}{
	{`{"text":"{{summary}}"}`, "plain", true},
	{`{"a":"{{from}}","b":{{taskIdsJson}}}`, `quote " and \ backslash`, true},
	{`{"p":{{payload}}}`, "</script>\u2028", true},
	{`{"a":"{{ from }}"}`, "\x00\x1f control", true},
	{`{"a":{{from}}}`, "x", false},
	{`{"a":"{{unknown}}"}`, "x", false},
	{`{"a":"{{from"}`, "x", false},
	{`{{payload}}`, "x", true},
	{`[`, "x", false},
	{`{"a":"{{{{from}}}}"}`, "x", false},
}

func renderValues(v string) map[string]string {
	return map[string]string{"from": v, "summary": v, "preview": v, "payload": `{"k":1}`, "taskIdsJson": `["a"]`}
}

func TestRenderTemplateSeeds(t *testing.T) {
	for _, s := range templateSeeds {
		out, err := wake.RenderTemplate(s.tpl, renderValues(s.value))
		if (err == nil) != s.ok {
			t.Errorf("RenderTemplate(%q) = %s, %v; want ok=%v", s.tpl, out, err, s.ok)
		}
		if err != nil && switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("error code %q", switchboard.ErrorCode(err))
		}
	}
}

// FuzzRenderTemplate checks that a rendered template is always JSON, and
// that a value put in a string placeholder comes back unchanged: no value
// can break out of its string.
func FuzzRenderTemplate(f *testing.F) {
	for _, s := range templateSeeds {
		f.Add(s.tpl, s.value)
	}
	f.Fuzz(func(t *testing.T, tpl, value string) {
		out, err := wake.RenderTemplate(tpl, renderValues(value))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("rendered body is not JSON: %q", out)
		}
		probe, err := wake.RenderTemplate(`{"v":"{{from}}"}`, renderValues(value))
		if err != nil {
			t.Fatalf("a string placeholder inside quotes failed: %v", err)
		}
		var m map[string]string
		if err := json.Unmarshal(probe, &m); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(value)); m["v"] != want {
			t.Fatalf("value %q came back as %q", want, m["v"])
		}
	})
}
