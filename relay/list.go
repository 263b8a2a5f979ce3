package relay

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Page sizes of ListTasks.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// TaskQuery is a peer's ListTasks request, already decoded.
type TaskQuery struct {
	ContextID   string
	State       a2a.TaskState // unspecified: any
	PageSize    *int          // nil: DefaultPageSize
	PageToken   string
	StatusAfter *time.Time
}

// TaskPage is one page of a listing.
type TaskPage struct {
	Tasks         []*switchboard.Task
	NextPageToken string // empty on the last page
	PageSize      int
	TotalSize     int
}

// ListTasks lists the peer's own tasks on the agent (on every agent, for a
// peer that is no one agent's), newest status first, one page at a time. The page token is opaque to the peer: it names the
// last task of the previous page, so pages stay stable while new tasks
// arrive.
func (s *Service) ListTasks(ctx context.Context, caller switchboard.Peer, q TaskQuery) (*TaskPage, error) {
	size := DefaultPageSize
	if q.PageSize != nil {
		size = *q.PageSize
		if size < 1 || size > MaxPageSize {
			return nil, switchboard.Errorf(switchboard.EINVALID, "pageSize must be between 1 and %d", MaxPageSize)
		}
	}
	f := switchboard.TaskFilter{
		AgentID:     &caller.AgentID,
		PeerID:      &caller.ID,
		StatusAfter: q.StatusAfter,
		Limit:       size + 1, // one more tells whether there is a next page
	}
	if caller.Kind != switchboard.PeerOutside {
		f.PeerKind = &caller.Kind
		if caller.AgentID == "" {
			f.AgentID = nil
		}
	}
	if q.ContextID != "" {
		f.ContextID = &q.ContextID
	}
	if q.State != a2a.TaskStateUnspecified {
		f.States = []a2a.TaskState{q.State}
	}
	if q.PageToken != "" {
		c, err := decodeCursor(q.PageToken)
		if err != nil {
			return nil, err
		}
		f.After = c
	}
	tasks, total, err := s.tasks.FindTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	page := &TaskPage{Tasks: tasks, PageSize: size, TotalSize: total}
	if len(tasks) > size {
		page.Tasks = tasks[:size]
		last := page.Tasks[size-1]
		page.NextPageToken = encodeCursor(switchboard.TaskCursor{StatusAt: switchboard.StatusAt(last), ID: last.ID()})
	}
	return page, nil
}

func encodeCursor(c switchboard.TaskCursor) string {
	raw := strconv.FormatInt(c.StatusAt.UnixNano(), 10) + "|" + string(c.ID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(token string) (*switchboard.TaskCursor, error) {
	bad := switchboard.Errorf(switchboard.EINVALID, "pageToken is not a token this server issued")
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, bad
	}
	nanos, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" {
		return nil, bad
	}
	n, err := strconv.ParseInt(nanos, 10, 64)
	if err != nil {
		return nil, bad
	}
	return &switchboard.TaskCursor{StatusAt: time.Unix(0, n).UTC(), ID: a2a.TaskID(id)}, nil
}

// InboxStates are the states of tasks that wait for their agent.
var InboxStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}

// MaxInbox is the most tasks one page of an inbox holds.
const MaxInbox = 200

// InboxQuery is an owner's inbox request.
type InboxQuery struct {
	All    bool   // every task of the agent, not only those waiting
	Cursor string // continue after the page whose NextCursor this is
	// Limit is the most tasks of the page, 1 to MaxInbox; 0: MaxInbox.
	Limit int
	// ContextID, when set, lists only the tasks of that conversation.
	ContextID string
}

// InboxPage is one page of an inbox.
type InboxPage struct {
	Tasks []*switchboard.Task
	// NextCursor continues the listing after this page; empty when the
	// page ends it.
	NextCursor string
}

// Inbox returns the agent's tasks that wait for it (submitted or working),
// or with q.All every task of the agent, oldest first, at most MaxInbox at
// a time. A page that does not end the listing carries a cursor to the
// next one, which names the page's last task (its creation time and id):
// tasks created since come on later pages, in order, and a task that
// stops waiting is simply not listed. A task is listed where its creation
// puts it, so one that waits again (a follow-up) behind the cursor, or
// whose creating instance's clock lags, is seen by the next listing from
// the start, not by later pages of this one.
func (s *Service) Inbox(ctx context.Context, agentID string, q InboxQuery) (*InboxPage, error) {
	limit := q.Limit
	if limit <= 0 || limit > MaxInbox {
		limit = MaxInbox
	}
	f := switchboard.TaskFilter{AgentID: &agentID, OldestFirst: true, Limit: limit + 1, NoTotal: true}
	if !q.All {
		f.States = InboxStates
	}
	if q.ContextID != "" {
		f.ContextID = &q.ContextID
	}
	if q.Cursor != "" {
		// An inbox cursor has a page token's form (encodeCursor), with the
		// creation time of the page's last task for its status time.
		c, err := decodeCursor(q.Cursor)
		if err != nil {
			return nil, switchboard.Errorf(switchboard.EINVALID, "cursor is not one this server issued")
		}
		f.After = &switchboard.TaskCursor{CreatedAt: c.StatusAt, ID: c.ID}
	}
	tasks, _, err := s.tasks.FindTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	page := &InboxPage{Tasks: tasks}
	if len(tasks) > limit {
		page.Tasks = tasks[:limit]
		last := page.Tasks[limit-1]
		page.NextCursor = encodeCursor(switchboard.TaskCursor{StatusAt: last.CreatedAt, ID: last.ID()})
	}
	return page, nil
}

// LastUserText returns the text of the most recent message from the peer,
// for inbox listings.
func LastUserText(t *a2a.Task) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := t.History[i]; m != nil && m.Role == a2a.MessageRoleUser {
			return switchboard.MessageText(m)
		}
	}
	return ""
}

// FinishedStates are the states of a finished task, which an agent's
// history lists.
var FinishedStates = []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

// FinishedTasks returns one page of the agent's finished tasks (every
// peer's), the most recently finished first, at most DefaultPageSize; a
// page that does not end the listing carries the token of the next one,
// as ListTasks does. It returns EINVALID for a token this server did not
// issue.
func (s *Service) FinishedTasks(ctx context.Context, agentID, pageToken string) (*TaskPage, error) {
	size := DefaultPageSize
	f := switchboard.TaskFilter{AgentID: &agentID, States: FinishedStates, Limit: size + 1, NoTotal: true}
	if pageToken != "" {
		c, err := decodeCursor(pageToken)
		if err != nil {
			return nil, err
		}
		f.After = c
	}
	tasks, _, err := s.tasks.FindTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	page := &TaskPage{Tasks: tasks, PageSize: size}
	if len(tasks) > size {
		page.Tasks = tasks[:size]
		last := page.Tasks[size-1]
		page.NextPageToken = encodeCursor(switchboard.TaskCursor{StatusAt: switchboard.StatusAt(last), ID: last.ID()})
	}
	return page, nil
}
