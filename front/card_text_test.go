package front_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
)

// hidden are characters an upstream may hide in the text of its card: NUL,
// C0 and C1 controls, DEL, and bidirectional embeddings, overrides and
// isolates.
var hidden = []string{"\x00", "\x07", "\x1b[2J", "\r", "\x7f", "\u0085", "\u009b", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"}

// TestParseCardStripsHiddenCharacters: the published card holds none of
// the characters switchboard.CheckName refuses, in any text the upstream
// wrote (name, description, version, skills, tags, examples, provider,
// extensions and their params); descriptions keep their line feeds and
// tabs; and a character hidden inside a private address does not keep
// it from the scrubber.
func TestParseCardStripsHiddenCharacters(t *testing.T) {
	dirty := func(s string) string { return strings.Join(append([]string{s}, hidden...), "x") }
	card := map[string]any{
		"name":        dirty("Acme"),
		"description": "line one\n\tline two " + dirty("d"),
		"version":     dirty("1.0"),
		"provider":    map[string]any{"organization": dirty("Acme Inc"), "url": "https://acme.example.com/"},
		"skills": []any{map[string]any{
			"id": dirty("book"), "name": dirty("Book"), "description": dirty("books"),
			"tags": []any{dirty("tag")}, "examples": []any{dirty("ex")},
		}},
		"capabilities": map[string]any{"extensions": []any{map[string]any{
			"uri": "https://ext.example.com/v1", "description": dirty("ext"),
			"params": map[string]any{dirty("k"): dirty("v")},
		}}},
		"supportedInterfaces": []any{map[string]any{"url": testUpstream, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
	}
	raw, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	c, err := front.ParseCard(raw, testUpstream, testCardURL, testPublic)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case string:
			if err := switchboard.CheckDescription(path, v); err != nil {
				t.Error(err)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			for k, e := range v {
				walk(path+" key", k)
				walk(path+"."+k, e)
			}
		}
	}
	walk("card", back)
	if err := switchboard.CheckName("name", c.Name); err != nil || !strings.HasPrefix(c.Name, "Acmex") {
		t.Errorf("Name = %q: %v", c.Name, err)
	}
	if !strings.HasPrefix(c.Description, "line one\n\tline two ") {
		t.Errorf("Description = %q, want its line feed and tab kept", c.Description)
	}
	if len(c.Skills) != 1 || c.Skills[0].Name == "" || len(c.Skills[0].Tags) != 1 || len(c.Skills[0].Examples) != 1 {
		t.Fatalf("Skills = %+v", c.Skills)
	}

	// A character hidden inside a private address or host name is taken
	// out before the scrubber reads the text, so it does not hide them.
	for _, h := range []string{"\x00", "\u2066", "\u0085", "\u202e"} {
		for _, leak := range []string{"http://10.0.0.1/admin", "box.tail1234.ts.net"} {
			hid := leak[:1] + h + leak[1:len(leak)-3] + h + leak[len(leak)-3:]
			raw := []byte(`{"name":"bot","description":"admin at ` + jsonChar(hid) + `"}`)
			c, err := front.ParseCard(raw, testUpstream, testCardURL, testPublic)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.Description, strings.TrimPrefix(leak, "http://")) {
				t.Errorf("Description = %q: %s hidden by %U was published", c.Description, leak, []rune(h)[0])
			}
		}
	}
}

// jsonChar returns h as a JSON string's escape.
func jsonChar(h string) string {
	b, _ := json.Marshal(h)
	return string(b[1 : len(b)-1])
}
