package dashboard

import (
	"html/template"
	"strings"
	"testing"
)

// TestRowsMatchTemplate: writeRow writes what html/template writes for
// rowTemplate, for values that need escaping in every field.
func TestRowsMatchTemplate(t *testing.T) {
	tmpl := template.Must(template.New("row").Parse(rowTemplate))
	evil := `<script>alert("x")</script>&'"`
	rows := []agentRow{
		{Handle: "h1", Name: evil, Description: evil, Mode: "connector", Connector: true, Live: true, Accepting: true,
			Approved: true, Communities: evil + ", lab", Waiting: 3, LastTask: "2026-01-02 03:04 UTC"},
		{Handle: `h"2`, Name: "n", Mode: "inbox", Approved: false},
		{Handle: "h3", Name: "n", Mode: "connector", Connector: true, Accepting: false, Communities: ""},
	}
	for _, approval := range []bool{false, true} {
		for _, r := range rows {
			var want strings.Builder
			data := struct {
				agentRow
				ShowApproval bool
			}{r, approval}
			if err := tmpl.Execute(&want, data); err != nil {
				t.Fatal(err)
			}
			got := string(rowsHTML([]agentRow{r}, approval))
			if got != want.String() {
				t.Fatalf("row %+v (approval %v):\n got %s\nwant %s", r, approval, got, want.String())
			}
			if strings.Contains(got, "<script>") {
				t.Fatalf("unescaped: %s", got)
			}
		}
	}
}
