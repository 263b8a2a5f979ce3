package wake

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Template placeholders. The string placeholders are replaced by the value
// JSON-escaped without its quotes, for use inside a JSON string; the raw
// ones by a JSON value.
var (
	stringPlaceholders = []string{"agent", "agentCard", "contextId", "taskId", "taskIds", "from", "preview", "kind",
		"hint", "summary", "wakeId", "userCode", "verificationUri"}
	rawPlaceholders = []string{"payload", "taskIdsJson"}
)

// maxRendered bounds a rendered template.
const maxRendered = 256 << 10

// RenderTemplate replaces each {{name}} in tpl with values[name]: string
// placeholders JSON-escaped (to be written inside quotes), raw ones as
// they are (JSON). An unknown placeholder, an unclosed one, or a result
// that is not JSON is an error (EINVALID).
func RenderTemplate(tpl string, values map[string]string) ([]byte, error) {
	var b strings.Builder
	rest := tpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return nil, switchboard.Errorf(switchboard.EINVALID, "a {{ is not closed by }}")
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		v, err := placeholder(name, values)
		if err != nil {
			return nil, err
		}
		b.WriteString(v)
		if b.Len() > maxRendered {
			return nil, switchboard.Errorf(switchboard.EINVALID, "the rendered body is larger than %d bytes", maxRendered)
		}
		rest = rest[i+2+j+2:]
	}
	out := []byte(b.String())
	if !json.Valid(out) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "the rendered body is not JSON (string placeholders go inside quotes; payload and taskIdsJson outside)")
	}
	return out, nil
}

func placeholder(name string, values map[string]string) (string, error) {
	for _, p := range rawPlaceholders {
		if p == name {
			v := values[name]
			if v == "" {
				v = "null"
			}
			return v, nil
		}
	}
	for _, p := range stringPlaceholders {
		if p == name {
			q, _ := json.Marshal(values[name])
			return string(q[1 : len(q)-1]), nil
		}
	}
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return "", switchboard.Errorf(switchboard.EINVALID, "unknown placeholder {{%s}} (known: %s, %s)", name,
		strings.Join(stringPlaceholders, ", "), strings.Join(rawPlaceholders, ", "))
}

// CheckTemplate reports whether tpl renders to JSON with sample values: the
// check made when a configuration is saved.
func CheckTemplate(tpl string) error {
	values := map[string]string{"payload": `{"event_type":"a2a_wake"}`, "taskIdsJson": `["t1","t2"]`}
	for _, p := range stringPlaceholders {
		values[p] = fmt.Sprintf("sample %s \"quoted\"", p)
	}
	_, err := RenderTemplate(tpl, values)
	return err
}
