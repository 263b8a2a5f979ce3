package ownerhttp_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/relay"
)

// inboxPage is one answer of GET /agents/{ref}/inbox, decoded.
type inboxPage struct {
	ids        []string
	nextCursor string
	hasCursor  bool // the answer has a next_cursor key
}

func getInboxPage(h *facetest.Harness, handle, query string) inboxPage {
	h.T.Helper()
	r := h.Owner("GET", "/agents/"+handle+"/inbox"+query, h.OperatorToken, nil)
	if r.Status != http.StatusOK {
		h.T.Fatalf("inbox%s: HTTP %d %s", query, r.Status, r.Body)
	}
	var p inboxPage
	for _, task := range r.JSON["tasks"].([]any) {
		p.ids = append(p.ids, facetest.Path(task, "id").(string))
	}
	c, ok := r.JSON["next_cursor"]
	p.hasCursor = ok
	p.nextCursor, _ = c.(string)
	return p
}

// TestInboxCursor lists an inbox of more than MaxInbox tasks page by page
// while new tasks arrive: the pages hold every waiting task exactly once,
// oldest first, those created while paging at the end; each page but the
// last carries next_cursor, the last none. With all=1 the finished tasks
// are listed too. A cursor the server did not issue is refused.
func TestInboxCursor(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("box")
	ctx := context.Background()
	peers := []switchboard.Peer{h.PeerOf(h.PeerToken(g, "bob")), h.PeerOf(h.PeerToken(g, "carol"))}
	var waiting, all []*switchboard.Task
	n := 0
	create := func(count int) {
		t.Helper()
		for range count {
			n++
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprint("task ", n)))
			msg.ID = fmt.Sprint("m-", n)
			task, _, err := h.Tasks.SendMessage(ctx, g, peers[n%2], &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
			facetest.Must(t, err)
			all = append(all, task)
			if n%7 == 0 {
				h.Reply(string(task.ID()), a2a.TaskStateCompleted, "done")
				continue
			}
			waiting = append(waiting, task)
		}
	}
	create(2*relay.MaxInbox + 50)
	sorted := func(tasks []*switchboard.Task) []string {
		tasks = slices.Clone(tasks)
		slices.SortStableFunc(tasks, func(a, b *switchboard.Task) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return cmp.Compare(a.ID(), b.ID())
		})
		out := make([]string, len(tasks))
		for i, task := range tasks {
			out[i] = string(task.ID())
		}
		return out
	}

	for _, tc := range []struct {
		name, query string
		want        *[]*switchboard.Task
	}{{"waiting", "", &waiting}, {"all", "all=1", &all}} {
		t.Run(tc.name, func(t *testing.T) {
			var listed []string
			cursor := ""
			for pages := 1; ; pages++ {
				q := url.Values{}
				if tc.query != "" {
					q.Set("all", "1")
				}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				p := getInboxPage(h, g.Handle, "?"+q.Encode())
				if len(p.ids) > relay.MaxInbox {
					t.Fatalf("page %d holds %d tasks, more than %d", pages, len(p.ids), relay.MaxInbox)
				}
				listed = append(listed, p.ids...)
				if pages == 1 {
					create(5) // new tasks arrive while the owner pages
				}
				if !p.hasCursor {
					break
				}
				if p.nextCursor == "" || len(p.ids) != relay.MaxInbox {
					t.Fatalf("page %d: next_cursor %q with %d tasks, want a cursor after a full page", pages, p.nextCursor, len(p.ids))
				}
				if pages > 10 {
					t.Fatal("more than 10 pages")
				}
				cursor = p.nextCursor
			}
			if want := sorted(*tc.want); !slices.Equal(listed, want) {
				t.Fatalf("pages listed %d tasks, want each of the %d once, oldest first:\ngot  %v\nwant %v", len(listed), len(want), listed, want)
			}
		})
	}

	// An inbox that fits one page, even exactly, has no cursor.
	small := h.Agent("small")
	if p := getInboxPage(h, small.Handle, ""); len(p.ids) != 0 || p.hasCursor {
		t.Fatalf("empty inbox: %+v", p)
	}
	dan := h.PeerOf(h.PeerToken(small, "dan"))
	for i := range relay.MaxInbox {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		msg.ID = fmt.Sprint("s-", i)
		_, _, err := h.Tasks.SendMessage(ctx, small, dan, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
		facetest.Must(t, err)
	}
	if p := getInboxPage(h, small.Handle, ""); len(p.ids) != relay.MaxInbox || p.hasCursor {
		t.Fatalf("inbox of exactly %d: %d tasks, cursor %v", relay.MaxInbox, len(p.ids), p.hasCursor)
	}
	for _, bad := range []string{"garbage!", "MTIzfA"} {
		r := h.Owner("GET", "/agents/box/inbox?cursor="+url.QueryEscape(bad), h.OperatorToken, nil)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("cursor %q: HTTP %d %s, want 400", bad, r.Status, r.Body)
		}
	}
}
