package relay

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// FuzzPageToken checks the ListTasks page token parser: any string either
// fails with EINVALID or yields a cursor that encodes back to itself.
func FuzzPageToken(f *testing.F) {
	f.Add(encodeCursor(switchboard.TaskCursor{StatusAt: time.Unix(1700000000, 123).UTC(), ID: "t-1"}))
	f.Add("")
	f.Add("MTIzfA")
	f.Add("garbage!")
	f.Add("LTF8eA") // "-1|x"
	f.Fuzz(func(t *testing.T, token string) {
		c, err := decodeCursor(token)
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			return
		}
		again, err := decodeCursor(encodeCursor(*c))
		if err != nil || !again.StatusAt.Equal(c.StatusAt) || again.ID != c.ID {
			t.Fatalf("round trip of %q: %+v vs %+v (%v)", token, c, again, err)
		}
	})
}
