package seal_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/seal"
)

func TestSealOpen(t *testing.T) {
	k, err := seal.NewKeyring(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.Seal("agents.webhook_secret", "sbw_top-secret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "sb1."+k.CurrentID()+".") || strings.Contains(s, "top-secret") || !k.Current(s) {
		t.Fatalf("sealed as %q", s)
	}
	again, _ := k.Seal("agents.webhook_secret", "sbw_top-secret")
	if again == s {
		t.Fatal("two seals of one value are the same: the nonce is not fresh")
	}
	if got, err := k.Open("agents.webhook_secret", s); err != nil || got != "sbw_top-secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// Another purpose, or an altered value, does not open.
	if _, err := k.Open("wake_configs.wake_key", s); err == nil {
		t.Fatal("a value opened for another purpose")
	}
	altered := s[:len(s)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(s, "AA")]
	if _, err := k.Open("agents.webhook_secret", altered); err == nil {
		t.Fatal("an altered value opened")
	}
	// Empty stays empty; a value from before sealing opens as itself.
	if e, _ := k.Seal("x", ""); e != "" || !k.Current("") {
		t.Fatalf("empty sealed as %q", e)
	}
	if got, err := k.Open("x", "plain-legacy"); err != nil || got != "plain-legacy" || k.Current("plain-legacy") {
		t.Fatalf("legacy value: %q %v", got, err)
	}
}

// TestRotation: a keyring with a new current key opens what the old key
// sealed and says it is not current; one without the old key cannot open
// it and says which key it lacks.
func TestRotation(t *testing.T) {
	oldKey, newKey := seal.NewKey(), seal.NewKey()
	old, _ := seal.NewKeyring(oldKey)
	s, _ := old.Seal("p", "secret")
	rotated, _ := seal.NewKeyring(newKey, oldKey)
	if got, err := rotated.Open("p", s); err != nil || got != "secret" {
		t.Fatalf("the rotated keyring opens %q, %v", got, err)
	}
	if rotated.Current(s) {
		t.Fatal("a value sealed with the old key is current after rotation")
	}
	resealed, _ := rotated.Seal("p", "secret")
	if !rotated.Current(resealed) {
		t.Fatal("a value sealed again is not current")
	}
	fresh, _ := seal.NewKeyring(newKey)
	_, err := fresh.Open("p", s)
	var unknown *seal.UnknownKeyError
	if !errors.As(err, &unknown) || unknown.ID != seal.KeyID(oldKey) {
		t.Fatalf("opening without the old key: %v", err)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", seal.KeyFileName)
	kf, err := seal.LoadKeyFile(path)
	if err != nil || !kf.Created || len(kf.Keys) != 1 {
		t.Fatalf("first load: %+v %v", kf, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %s", fi.Mode())
	}
	again, err := seal.LoadKeyFile(path)
	if err != nil || again.Created || seal.KeyID(again.Keys[0]) != seal.KeyID(kf.Keys[0]) {
		t.Fatalf("second load: %+v %v", again, err)
	}
	id, err := seal.RotateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rotated, _ := seal.LoadKeyFile(path)
	if len(rotated.Keys) != 2 || seal.KeyID(rotated.Keys[0]) != id || seal.KeyID(rotated.Keys[1]) != seal.KeyID(kf.Keys[0]) {
		t.Fatalf("after rotation: %d keys", len(rotated.Keys))
	}
	// A file others may read is made private.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	fixed, err := seal.LoadKeyFile(path)
	if err != nil || fixed.FixedMode != 0o644 {
		t.Fatalf("loose mode: %+v %v", fixed, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode after the fix %s", fi.Mode())
	}
}

func TestParseKeys(t *testing.T) {
	a, b := seal.NewKey(), seal.NewKey()
	text := seal.FormatKeys([][]byte{a, b})
	keys, err := seal.ParseKeys(text)
	if err != nil || len(keys) != 2 || seal.KeyID(keys[0]) != seal.KeyID(a) {
		t.Fatalf("%d keys, %v", len(keys), err)
	}
	oneLine := strings.Join(strings.Fields(strings.Join(strings.Split(text, "\n")[2:], " ")), ",")
	if keys, err := seal.ParseKeys(oneLine); err != nil || len(keys) != 2 {
		t.Fatalf("comma-separated: %d, %v", len(keys), err)
	}
	for _, bad := range []string{"", "# only a comment", "not base64!", "c2hvcnQ="} {
		if _, err := seal.ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}

// FuzzOpen: whatever is stored, Open returns or fails without panicking;
// a value that is not sealed opens as itself, and a sealed one opens only
// if the keyring sealed it.
func FuzzOpen(f *testing.F) {
	k, _ := seal.NewKeyring(make([]byte, seal.KeySize))
	s, _ := k.Seal("p", "secret")
	for _, v := range []string{"", "plain", s, "sb1.", "sb1.00000000.", "sb1." + k.CurrentID() + ".AAAA", s + "x"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := k.Open("p", v)
		switch {
		case !seal.IsSealed(v):
			if err != nil || got != v {
				t.Fatalf("Open(%q) = %q, %v; a value not sealed opens as itself", v, got, err)
			}
		case err == nil && v != s && got == "":
			t.Fatalf("Open(%q) opened to nothing", v)
		}
	})
}

// FuzzParseKeys: whatever the key setting holds, ParseKeys returns keys of
// KeySize bytes or an error, and what FormatKeys writes reads back.
func FuzzParseKeys(f *testing.F) {
	f.Add(seal.FormatKeys([][]byte{make([]byte, seal.KeySize)}))
	for _, s := range []string{"", ",", "#x\n", "AAAA", "c2hvcnQ=,", strings.Repeat("A", 43)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		keys, err := seal.ParseKeys(text)
		if err != nil {
			return
		}
		for _, k := range keys {
			if len(k) != seal.KeySize {
				t.Fatalf("a key of %d bytes from %q", len(k), text)
			}
		}
		again, err := seal.ParseKeys(seal.FormatKeys(keys))
		if err != nil || len(again) != len(keys) {
			t.Fatalf("FormatKeys does not read back: %v", err)
		}
	})
}
