package sqlstore

import "testing"

// FuzzAuditCursor: any text is read as a cursor or refused, never a
// panic, and every cursor the store gives reads back as itself.
func FuzzAuditCursor(f *testing.F) {
	for _, seed := range []string{"", "x", encodeAuditCursor(0, "a"), encodeAuditCursor(-1, "id:with:colons"), "MTox", "OjE"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, c string) {
		at, id, err := decodeAuditCursor(c)
		if err != nil {
			return
		}
		at2, id2, err := decodeAuditCursor(encodeAuditCursor(at, id))
		if err != nil || at2 != at || id2 != id {
			t.Fatalf("%q: (%d, %q) read back as (%d, %q, %v)", c, at, id, at2, id2, err)
		}
	})
}
