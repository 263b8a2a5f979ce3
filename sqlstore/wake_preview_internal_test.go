package sqlstore

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestStoredPreview checks that a wake about a message stores the
// redacted preview of its text, made only when asked, and that a preview
// given outright wins.
func TestStoredPreview(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("call me   with api_key=supersecretvalue123"), a2a.NewTextPart("please"))
	r := &switchboard.WakeRequest{Message: msg}
	if got, want := storedPreview(r), "call me with api_key=supe… please"; got != want {
		t.Fatalf("preview of the message: %q, want %q", got, want)
	}
	r.Preview = "given"
	if got := storedPreview(r); got != "given" {
		t.Fatalf("a given preview: %q", got)
	}
	if got := storedPreview(&switchboard.WakeRequest{}); got != "" {
		t.Fatalf("no message, no preview: %q", got)
	}
}
