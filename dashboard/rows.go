package dashboard

import (
	"html"
	"html/template"
	"net/url"
	"strconv"
	"strings"
)

// The rows of the agents list are written here rather than by the
// template: html/template calls its escapers through reflection, a dozen
// times a row, which made a list of 1,000 agents cost 30 ms of CPU; this
// writes the same HTML in a fraction of that. Every value that comes from
// an owner (handle, name, description, communities) goes through
// html.EscapeString, which escapes < > & ' " and so is safe in text and in
// double-quoted attributes, the only places these rows put values.
// TestRowsMatchTemplate keeps this and rowTemplate the same.

// rowTemplate is what writeRow writes, as a template: the test renders
// both and compares them.
const rowTemplate = `<tr data-agent="{{.Handle}}"><th scope="row"><a class="handle" href="/dashboard/agents/{{.Handle}}">{{.Handle}}</a> <span class="name">{{.Name}}</span>` +
	`{{with .Description}} <span class="desc">{{.}}</span>{{end}}</th><td>{{.Mode}}</td><td class="presence">` +
	`{{if .Live}}<span class="badge on">live</span>{{else if .Connector}}<span class="badge off">offline</span>{{else}}—{{end}}</td><td>` +
	`{{if .Accepting}}<button type="submit" role="switch" aria-checked="true" name="set" value="{{.Handle}} false" aria-label="accepts tasks {{.Handle}}">accepting</button>` +
	`{{else}}<button type="submit" role="switch" aria-checked="false" name="set" value="{{.Handle}} true" aria-label="accepts tasks {{.Handle}}">paused</button>{{end}}</td>` +
	`{{if .ShowApproval}}<td>{{if .Approved}}yes{{else}}<span class="badge off">waiting</span>{{end}}</td>{{end}}` +
	`<td>{{or .Communities "—"}}</td><td class="waiting">{{.Waiting}}</td><td>{{or .LastTask "never"}}</td></tr>` + "\n"

// rowsHTML writes the rows of one account's agents.
func rowsHTML(rows []agentRow, showApproval bool) template.HTML {
	var b strings.Builder
	b.Grow(len(rows) * 700)
	for i := range rows {
		writeRow(&b, &rows[i], showApproval)
	}
	return template.HTML(b.String()) // every owner's value is escaped in writeRow
}

// writeRow writes one agent's row (see rowTemplate).
func writeRow(b *strings.Builder, r *agentRow, showApproval bool) {
	handle := html.EscapeString(r.Handle)
	b.WriteString(`<tr data-agent="`)
	b.WriteString(handle)
	b.WriteString(`"><th scope="row"><a class="handle" href="/dashboard/agents/`)
	b.WriteString(html.EscapeString(url.PathEscape(r.Handle)))
	b.WriteString(`">`)
	b.WriteString(handle)
	b.WriteString(`</a> <span class="name">`)
	b.WriteString(html.EscapeString(r.Name))
	b.WriteString(`</span>`)
	if r.Description != "" {
		b.WriteString(` <span class="desc">`)
		b.WriteString(html.EscapeString(r.Description))
		b.WriteString(`</span>`)
	}
	b.WriteString(`</th><td>`)
	b.WriteString(html.EscapeString(r.Mode))
	b.WriteString(`</td><td class="presence">`)
	switch {
	case r.Live:
		b.WriteString(`<span class="badge on">live</span>`)
	case r.Connector:
		b.WriteString(`<span class="badge off">offline</span>`)
	default:
		b.WriteString(`—`)
	}
	b.WriteString(`</td><td>`)
	if r.Accepting {
		b.WriteString(`<button type="submit" role="switch" aria-checked="true" name="set" value="`)
		b.WriteString(handle)
		b.WriteString(` false" aria-label="accepts tasks `)
		b.WriteString(handle)
		b.WriteString(`">accepting</button>`)
	} else {
		b.WriteString(`<button type="submit" role="switch" aria-checked="false" name="set" value="`)
		b.WriteString(handle)
		b.WriteString(` true" aria-label="accepts tasks `)
		b.WriteString(handle)
		b.WriteString(`">paused</button>`)
	}
	b.WriteString(`</td>`)
	if showApproval {
		if r.Approved {
			b.WriteString(`<td>yes</td>`)
		} else {
			b.WriteString(`<td><span class="badge off">waiting</span></td>`)
		}
	}
	b.WriteString(`<td>`)
	b.WriteString(orDash(html.EscapeString(r.Communities), "—"))
	b.WriteString(`</td><td class="waiting">`)
	b.WriteString(strconv.Itoa(r.Waiting))
	b.WriteString(`</td><td>`)
	b.WriteString(orDash(html.EscapeString(r.LastTask), "never"))
	b.WriteString("</td></tr>\n")
}

// orDash returns s, or alt when s is empty.
func orDash(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
