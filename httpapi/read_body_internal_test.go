package httpapi

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadAllWhateverTheDeclaredLength checks that a body is read whole
// and as sent, whether its declared length is right, too short, too long,
// absent, or past what is made in advance.
func TestReadAllWhateverTheDeclaredLength(t *testing.T) {
	for _, tc := range []struct {
		body     string
		declared int64
	}{
		{"hello", 5}, {"hello", 2}, {"hello", 500}, {"hello", -1}, {"", 0}, {"", 10}, {"hello", 10 << 20},
		{strings.Repeat("x", presizeLimit*2+7), presizeLimit*2 + 7},
	} {
		got, err := readAll(strings.NewReader(tc.body), tc.declared)
		if err != nil || !bytes.Equal(got, []byte(tc.body)) {
			t.Fatalf("declared %d, %d bytes sent: read %d bytes, %v", tc.declared, len(tc.body), len(got), err)
		}
		if limit := int64(presizeLimit + bytes.MinRead); tc.declared > 0 && int64(cap(got)) > max(limit, int64(2*len(tc.body))) {
			t.Fatalf("declared %d: a buffer of %d bytes was made", tc.declared, cap(got))
		}
	}
}
