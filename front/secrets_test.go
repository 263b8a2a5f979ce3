package front

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// testCreds are a front's credentials: a bearer, an access service's
// secret header, and a Basic one.
var testCreds = switchboard.FrontCredentials{Bearer: "owner-bearer-0123456789", Headers: map[string]string{
	"CF-Access-Client-Secret": "cf+secret/abc?def&ghi",
	"X-Basic":                 "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:basic-password-42")),
	"X-Short":                 "abc", // too short to be looked for
}}

// leakedForms returns every way value may stand in text that the
// Secrets of testCreds must remove.
func leakedForms(value string) []string {
	forms := []string{value, url.QueryEscape(value)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(value)))
		for _, before := range []string{"", "u", "us", "user:"} { // inside a longer text, at each offset
			forms = append(forms, enc.EncodeToString([]byte(before+value+";tail")))
		}
	}
	return append(forms, "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+value)))
}

// testSecretValues are the values of testCreds that must never show, with the
// password inside the Basic header.
var testSecretValues = []string{"owner-bearer-0123456789", "cf+secret/abc?def&ghi", "alice:basic-password-42", "basic-password-42",
	testCreds.Headers["X-Basic"]}

// showsSecret reports which form of which value of testCreds text holds.
func showsSecret(text string) string {
	for _, v := range testSecretValues {
		for _, f := range []string{v, url.QueryEscape(v), base64.RawStdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(text, f) {
				return f
			}
		}
		for skip := range 3 { // the part of a base64 text that only the value makes
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				if n := (len(v) - skip) / 3 * 3; n > 0 && strings.Contains(text, enc.EncodeToString([]byte(v[skip:skip+n]))) {
					return v + " in base64"
				}
			}
		}
	}
	return ""
}

// TestSecretsRemoveEveryForm: a credential's value is removed as it is,
// URL-encoded and in base64 (both alphabets, padded or not, at any
// offset inside a longer base64 text, inside Basic user:value); so are a
// Basic header's user:password and password. A value shorter than
// MinSecretLen is left alone, and so is text without a value.
func TestSecretsRemoveEveryForm(t *testing.T) {
	s := CredentialSecrets(testCreds)
	for _, v := range testSecretValues {
		for _, form := range leakedForms(v) {
			text := "before " + form + " after"
			got := s.String(text)
			if leak := showsSecret(got); leak != "" || !strings.Contains(got, CredentialRemoved) {
				t.Errorf("%q became %q, which shows %q", text, got, leak)
			}
		}
	}
	for _, clean := range []string{"abc is short", "nothing here", ""} {
		if got := s.String(clean); got != clean {
			t.Errorf("%q became %q", clean, got)
		}
	}
	if got, want := s.Found("x owner-bearer-0123456789 y "+base64.StdEncoding.EncodeToString([]byte("basic-password-42"))), []string{"bearer", "header X-Basic"}; !slices.Equal(got, want) {
		t.Errorf("Found = %q, want %q", got, want)
	}
	clean := strings.Repeat("a text without a value, ", 40)
	if n := testing.AllocsPerRun(10, func() { _ = s.String(clean) }); n != 0 {
		t.Errorf("a text without a value was copied: %v allocations", n)
	}
	var none *Secrets
	if none.String("owner-bearer-0123456789") != "owner-bearer-0123456789" || none.Key() != "" || CredentialSecrets(switchboard.FrontCredentials{}) != nil {
		t.Error("no credentials should remove nothing")
	}
	other := CredentialSecrets(switchboard.FrontCredentials{Bearer: "another-bearer-0123"})
	if s.Key() == "" || s.Key() == other.Key() || s.Key() != CredentialSecrets(testCreds).Key() || strings.Contains(s.Key(), "owner-bearer") {
		t.Error("Key must tell sets of values apart, stably, without showing them")
	}
}

// TestSecretsEvent: every text of an event relayed to a peer loses the
// values: ids, names, parts of every kind (the bytes of a file too),
// data and metadata, keys included; the event given is not changed.
func TestSecretsEvent(t *testing.T) {
	s := CredentialSecrets(testCreds)
	v := "owner-bearer-0123456789"
	b64 := base64.StdEncoding.EncodeToString([]byte(v))
	parts := func() a2a.ContentParts {
		return a2a.ContentParts{a2a.NewTextPart("text " + v), a2a.NewDataPart(map[string]any{v: []any{b64, map[string]any{"k": v}}}),
			&a2a.Part{Content: a2a.Raw("bytes " + v), Filename: v + ".txt", MediaType: "text/plain", Metadata: map[string]any{"m": v}},
			&a2a.Part{Content: a2a.URL("https://example.com/?t=" + url.QueryEscape(testCreds.Headers["CF-Access-Client-Secret"]))}}
	}
	msg := func() *a2a.Message {
		return &a2a.Message{ID: "id-" + v, Role: a2a.MessageRoleAgent, Parts: parts(), Metadata: map[string]any{"echo": v}, Extensions: []string{v}}
	}
	art := &a2a.Artifact{ID: a2a.ArtifactID(v), Name: v, Description: b64, Parts: parts(), Metadata: map[string]any{"echo": v}}
	events := []a2a.Event{
		msg(),
		&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: msg()}, Artifacts: []*a2a.Artifact{art},
			History: []*a2a.Message{msg()}, Metadata: map[string]any{"echo": v}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg()}, Metadata: map[string]any{v: 1}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: art, Metadata: map[string]any{"echo": b64}},
	}
	for _, ev := range events {
		before := jsonText(t, ev)
		after := jsonText(t, s.Event(ev))
		if leak := showsSecret(after); leak != "" {
			t.Errorf("%T relayed %q: %s", ev, leak, after)
		}
		if !strings.Contains(after, "text "+CredentialRemoved) {
			t.Errorf("%T lost its text: %s", ev, after)
		}
		if again := jsonText(t, ev); again != before {
			t.Errorf("%T was changed in place", ev)
		}
	}
	// Raw bytes stay bytes, without the value.
	got := s.Event(msg()).(*a2a.Message).Parts[2].Content.(a2a.Raw)
	if string(got) != "bytes "+CredentialRemoved {
		t.Errorf("raw part %q", got)
	}
}
