package front

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// CredentialRemoved stands where a credential's value was removed.
const CredentialRemoved = "[credential-removed]" // one word: it may stand inside a URL

// MinSecretLen is the length, in bytes, under which a credential's value
// is not looked for: a shorter one is no secret anyone could keep, and
// would match ordinary words.
const MinSecretLen = 8

// A Secret is the value of a credential that must never reach a peer,
// and the name a leak report gives it (never the value).
type Secret struct {
	Name  string // "bearer", "header CF-Access-Client-Secret"
	Value string
}

// Secrets removes the values of credentials from what goes back to peers:
// an upstream may reflect the headers it is sent into its card or its
// answers. Each value is found as it is, URL-encoded, and in base64
// (standard and URL-safe alphabets, with and without padding, and inside
// a longer base64 text such as "Basic base64(user:value)", whatever its
// offset there); a value that is a "Bearer" or "Basic" credential is found
// by its token too, and a Basic one by its "user:password" and password.
// A nil *Secrets removes nothing. Secrets is immutable and safe for
// concurrent use.
type Secrets struct {
	forms    []secretForm // longest first
	replacer *strings.Replacer
	key      string // tells one set of values from another; "" for none
}

// secretForm is one way a credential's value may be written.
type secretForm struct {
	text, name string
}

// NewSecrets returns the Secrets of secrets; values shorter than
// MinSecretLen are left out.
func NewSecrets(secrets ...Secret) *Secrets {
	seen := map[string]bool{}
	var forms []secretForm
	add := func(text, name string) {
		if len(text) >= MinSecretLen && !seen[text] {
			seen[text] = true
			forms = append(forms, secretForm{text, name})
		}
	}
	var values []string
	for _, sec := range secrets {
		if len(sec.Value) < MinSecretLen {
			continue
		}
		values = append(values, sec.Name+"\x00"+sec.Value)
		for _, v := range secretValues(sec.Value) {
			add(v, sec.Name)
			add(url.QueryEscape(v), sec.Name)
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				add(enc.EncodeToString([]byte(v)), sec.Name)
				add(enc.WithPadding(base64.NoPadding).EncodeToString([]byte(v)), sec.Name)
				for skip := range 3 { // inside a longer base64 text, at any offset
					if n := (len(v) - skip) / 3 * 3; n > 0 {
						add(enc.EncodeToString([]byte(v[skip:skip+n])), sec.Name)
					}
				}
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	// Longest first: a form that holds another is replaced whole.
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i].text) > len(forms[j].text) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f.text, CredentialRemoved)
	}
	sort.Strings(values)
	sum := sha256.Sum256([]byte(strings.Join(values, "\x00")))
	return &Secrets{forms: forms, replacer: strings.NewReplacer(pairs...), key: hex.EncodeToString(sum[:])}
}

// secretValues returns v and the values a credential v holds: the token
// of "Bearer token" or "Basic token", and the "user:password" of a Basic
// token and its password.
func secretValues(v string) []string {
	out := []string{v}
	scheme, token, ok := strings.Cut(v, " ")
	if !ok {
		return out
	}
	token = strings.TrimSpace(token)
	switch strings.ToLower(scheme) {
	case "bearer":
		out = append(out, token)
	case "basic":
		out = append(out, token)
		if raw, err := base64.StdEncoding.DecodeString(token); err == nil {
			out = append(out, string(raw))
			if _, pass, ok := strings.Cut(string(raw), ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}

// CredentialSecrets returns the Secrets of a front's credentials: its
// bearer and the value of each of its headers.
func CredentialSecrets(c switchboard.FrontCredentials) *Secrets {
	secrets := []Secret{{Name: "bearer", Value: c.Bearer}}
	for k, v := range c.Headers {
		secrets = append(secrets, Secret{Name: "header " + k, Value: v})
	}
	return NewSecrets(secrets...)
}

// Key tells one set of values from another without showing them: ""
// for none.
func (s *Secrets) Key() string {
	if s == nil {
		return ""
	}
	return s.key
}

// String returns str without the values, str itself when it holds none
// (the replacer, which walks str a byte at a time and copies it, runs
// only when a value is there).
func (s *Secrets) String(str string) string {
	if s == nil {
		return str
	}
	for _, f := range s.forms {
		if strings.Contains(str, f.text) {
			return s.replacer.Replace(str)
		}
	}
	return str
}

// Found returns the names of the credentials whose values str holds,
// sorted, without repeats.
func (s *Secrets) Found(str string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.forms {
		if strings.Contains(str, f.text) && !slices.Contains(out, f.name) {
			out = append(out, f.name)
		}
	}
	sort.Strings(out)
	return out
}

// FoundIn returns the names of the credentials whose values v, a value
// decoded from JSON, holds in any string or object key, sorted, without
// repeats.
func (s *Secrets) FoundIn(v any) []string {
	if s == nil {
		return nil
	}
	found := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, name := range s.Found(v) {
				found[name] = true
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		}
	}
	walk(v)
	var out []string
	for name := range found {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Bytes returns b without the values, b itself when it holds none.
func (s *Secrets) Bytes(b []byte) []byte {
	if s == nil {
		return b
	}
	for _, f := range s.forms {
		if bytes.Contains(b, []byte(f.text)) {
			return []byte(s.replacer.Replace(string(b)))
		}
	}
	return b
}

// Value returns v, a value decoded from JSON, with every string and
// object key without the values.
func (s *Secrets) Value(v any) any {
	if s == nil {
		return v
	}
	switch v := v.(type) {
	case string:
		return s.String(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.Value(e)
		}
		return out
	case map[string]any:
		return s.metadata(v)
	}
	return v
}

// metadata returns m with every key and value without the values.
func (s *Secrets) metadata(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // keys that become equal keep the first's value
	out := make(map[string]any, len(m))
	for _, k := range keys {
		if sk := s.String(k); !has(out, sk) {
			out[sk] = s.Value(m[k])
		}
	}
	return out
}

func has(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// Event returns a copy of ev, an event for a peer, without the values in
// any of its text: ids, names, descriptions, parts (text, file names,
// media types, URLs, the bytes of a file, data) and metadata.
func (s *Secrets) Event(ev a2a.Event) a2a.Event {
	if s == nil {
		return ev
	}
	switch e := ev.(type) {
	case *a2a.Message:
		return s.message(e)
	case *a2a.Task:
		c := *e
		c.ID, c.ContextID = a2a.TaskID(s.String(string(e.ID))), s.String(e.ContextID)
		c.Status = s.status(e.Status)
		if e.Artifacts != nil {
			c.Artifacts = make([]*a2a.Artifact, len(e.Artifacts))
			for i, a := range e.Artifacts {
				c.Artifacts[i] = s.artifact(a)
			}
		}
		if e.History != nil {
			c.History = make([]*a2a.Message, len(e.History))
			for i, m := range e.History {
				c.History[i] = s.message(m)
			}
		}
		c.Metadata = s.metadata(e.Metadata)
		return &c
	case *a2a.TaskStatusUpdateEvent:
		c := *e
		c.TaskID, c.ContextID = a2a.TaskID(s.String(string(e.TaskID))), s.String(e.ContextID)
		c.Status = s.status(e.Status)
		c.Metadata = s.metadata(e.Metadata)
		return &c
	case *a2a.TaskArtifactUpdateEvent:
		c := *e
		c.TaskID, c.ContextID = a2a.TaskID(s.String(string(e.TaskID))), s.String(e.ContextID)
		c.Artifact = s.artifact(e.Artifact)
		c.Metadata = s.metadata(e.Metadata)
		return &c
	}
	return ev
}

func (s *Secrets) status(st a2a.TaskStatus) a2a.TaskStatus {
	st.Message = s.message(st.Message)
	return st
}

func (s *Secrets) message(m *a2a.Message) *a2a.Message {
	if m == nil {
		return nil
	}
	c := *m
	c.ID, c.ContextID, c.TaskID = s.String(m.ID), s.String(m.ContextID), a2a.TaskID(s.String(string(m.TaskID)))
	c.Extensions = s.strings(m.Extensions)
	if m.ReferenceTasks != nil {
		c.ReferenceTasks = make([]a2a.TaskID, len(m.ReferenceTasks))
		for i, id := range m.ReferenceTasks {
			c.ReferenceTasks[i] = a2a.TaskID(s.String(string(id)))
		}
	}
	c.Parts = s.parts(m.Parts)
	c.Metadata = s.metadata(m.Metadata)
	return &c
}

func (s *Secrets) artifact(a *a2a.Artifact) *a2a.Artifact {
	if a == nil {
		return nil
	}
	c := *a
	c.ID = a2a.ArtifactID(s.String(string(a.ID)))
	c.Name, c.Description = s.String(a.Name), s.String(a.Description)
	c.Extensions = s.strings(a.Extensions)
	c.Parts = s.parts(a.Parts)
	c.Metadata = s.metadata(a.Metadata)
	return &c
}

func (s *Secrets) parts(ps a2a.ContentParts) a2a.ContentParts {
	if ps == nil {
		return nil
	}
	out := make(a2a.ContentParts, len(ps))
	for i, p := range ps {
		if p == nil {
			continue
		}
		c := *p
		c.Filename, c.MediaType = s.String(p.Filename), s.String(p.MediaType)
		c.Metadata = s.metadata(p.Metadata)
		switch v := p.Content.(type) {
		case a2a.Text:
			c.Content = a2a.Text(s.String(string(v)))
		case a2a.URL:
			c.Content = a2a.URL(s.String(string(v)))
		case a2a.Raw:
			c.Content = a2a.Raw(s.Bytes(v))
		case a2a.Data:
			c.Content = a2a.Data{Value: s.Value(v.Value)}
		}
		out[i] = &c
	}
	return out
}

func (s *Secrets) strings(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = s.String(e)
	}
	return out
}
