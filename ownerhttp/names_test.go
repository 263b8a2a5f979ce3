package ownerhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestNamesRefuseControlAndBidi: a name or a description that holds a
// NUL, a control character or a bidirectional override or isolate is
// refused with 422 and a message that names the field, wherever an owner
// or the operator sets one: agents (their handle, name, description,
// version and card skills), accounts, communities.
func TestNamesRefuseControlAndBidi(t *testing.T) {
	h := facetest.New(t)
	acct, alice := h.Account("alice")
	if r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "helper", "description": "Helps.\n\tWith lists."}); r.Status != http.StatusCreated {
		t.Fatalf("a description of two lines: %d %s", r.Status, r.Body)
	}
	skill := func(k, v string) map[string]any {
		sk := map[string]any{"id": "code", "name": "Code", "tags": []string{"go"}}
		sk[k] = v
		if k == "tags" {
			sk[k] = []string{"go", v}
		}
		return sk
	}
	for _, c := range []struct {
		name, method, path, token string
		body                      map[string]any
		field                     string
	}{
		{"handle", "POST", "/agents", alice, map[string]any{"handle": "he\x00lper"}, "handle"},
		{"name", "POST", "/agents", alice, map[string]any{"handle": "fresh", "name": "Helper\u202e"}, "name"},
		{"name/update", "PATCH", "/agents/helper", alice, map[string]any{"name": "\x1b[31mred"}, "name"},
		{"description", "PATCH", "/agents/helper", alice, map[string]any{"description": "ok\r\nthen"}, "description"},
		{"description/isolate", "PATCH", "/agents/helper", alice, map[string]any{"description": "\u2066x\u2069"}, "description"},
		{"version", "PATCH", "/agents/helper", alice, map[string]any{"version": "1.0\x00"}, "version"},
		{"skill/name", "PATCH", "/agents/helper", alice, map[string]any{"skills": []any{skill("name", "C\u202dode")}}, "skills[0].name"},
		{"skill/description", "PATCH", "/agents/helper", alice, map[string]any{"skills": []any{skill("description", "\u0085")}}, "skills[0].description"},
		{"skill/tag", "PATCH", "/agents/helper", alice, map[string]any{"skills": []any{skill("tags", "\x07")}}, "skills[0].tags[1]"},
		{"extended-skill/name", "PATCH", "/agents/helper", alice, map[string]any{"extended_skills": []any{skill("name", "\u202b")}}, "extended_skills[0].name"},
		{"account", "POST", "/accounts", h.OperatorToken, map[string]any{"name": "bob\u202e"}, "name"},
		{"account/update", "PATCH", "/accounts/" + acct.ID, h.OperatorToken, map[string]any{"name": "al\x00ice"}, "name"},
		{"community", "PUT", "/communities/lab\u2067", h.OperatorToken, map[string]any{"closed": true}, "community name"},
		{"community/join", "PUT", "/agents/helper/communities/l%00ab", alice, nil, "community name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.Owner(c.method, c.path, c.token, c.body)
			msg, _ := r.JSON["error"].(string)
			if r.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(msg, c.field+" ") || !strings.Contains(msg, "U+") {
				t.Fatalf("%d %s, want 422 naming %s and the character", r.Status, r.Body, c.field)
			}
		})
	}
	if r := h.Owner("GET", "/agents/helper", alice, nil); r.JSON["name"] != "helper" || r.JSON["description"] != "Helps.\n\tWith lists." {
		t.Fatalf("a refused change was kept: %s", r.Body)
	}
}
