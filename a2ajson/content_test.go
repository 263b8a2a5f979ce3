package a2ajson_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/internal/parttest"
)

// TestHasContent: every part without content is told apart from parts
// with one, empty text and empty bytes included.
func TestHasContent(t *testing.T) {
	for name, p := range parttest.Empty() {
		if a2ajson.HasContent(p) {
			t.Errorf("%s: has content", name)
		}
		if i := a2ajson.EmptyPart(a2a.ContentParts{a2a.NewTextPart("x"), p}); i != 1 {
			t.Errorf("%s: EmptyPart = %d, want 1", name, i)
		}
	}
	for name, p := range map[string]*a2a.Part{
		"Text": a2a.NewTextPart(""), "Raw": a2a.NewRawPart([]byte{}), "Data": a2a.NewDataPart(map[string]any{}),
		"URL": a2a.NewFileURLPart("https://x.example/f", "text/plain"),
	} {
		if !a2ajson.HasContent(p) {
			t.Errorf("%s: no content", name)
		}
	}
	if i := a2ajson.EmptyPart(a2a.ContentParts{a2a.NewTextPart("x")}); i != -1 {
		t.Errorf("EmptyPart of full parts = %d", i)
	}
}
