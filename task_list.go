package switchboard

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
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
	Tasks         []*Task
	NextPageToken string // empty on the last page
	PageSize      int
	TotalSize     int
}

// ListTasks lists the peer's own tasks on the agent, newest status first,
// one page at a time. The page token is opaque to the peer: it names the
// last task of the previous page, so pages stay stable while new tasks
// arrive.
func (s *TaskService) ListTasks(ctx context.Context, caller Peer, q TaskQuery) (*TaskPage, error) {
	size := DefaultPageSize
	if q.PageSize != nil {
		size = *q.PageSize
		if size < 1 || size > MaxPageSize {
			return nil, Errorf(EINVALID, "pageSize must be between 1 and %d", MaxPageSize)
		}
	}
	f := TaskFilter{
		AgentID:     &caller.AgentID,
		PeerID:      &caller.ID,
		StatusAfter: q.StatusAfter,
		Limit:       size + 1, // one more tells whether there is a next page
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
		page.NextPageToken = encodeCursor(TaskCursor{StatusAt: StatusAt(last), ID: last.ID()})
	}
	return page, nil
}

// StatusAt returns the time by which task listings sort a task: its status
// timestamp, or its last update if the status has none.
func StatusAt(t *Task) time.Time {
	if ts := t.A2A.Status.Timestamp; ts != nil {
		return *ts
	}
	return t.UpdatedAt
}

func encodeCursor(c TaskCursor) string {
	raw := strconv.FormatInt(c.StatusAt.UnixNano(), 10) + "|" + string(c.ID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(token string) (*TaskCursor, error) {
	bad := Errorf(EINVALID, "pageToken is not a token this server issued")
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
	return &TaskCursor{StatusAt: time.Unix(0, n).UTC(), ID: a2a.TaskID(id)}, nil
}

// InboxStates are the states of tasks that wait for their agent.
var InboxStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}

// MaxInbox is the most tasks one inbox listing returns.
const MaxInbox = 200

// Inbox returns the agent's tasks that wait for it (submitted or working),
// oldest first, or with all every task of the agent.
func (s *TaskService) Inbox(ctx context.Context, agentID string, all bool) ([]*Task, error) {
	f := TaskFilter{AgentID: &agentID, OldestFirst: true, Limit: MaxInbox, NoTotal: true}
	if !all {
		f.States = InboxStates
	}
	tasks, _, err := s.tasks.FindTasks(ctx, f)
	return tasks, err
}

// TrimTask returns a copy of t for the wire: at most historyLength of the
// most recent history messages (nil: all; 0: none) and, unless
// withArtifacts, no artifacts. The stored task is not changed.
func TrimTask(t *a2a.Task, historyLength *int, withArtifacts bool) *a2a.Task {
	c := *t
	if historyLength != nil {
		n := *historyLength
		switch {
		case n <= 0:
			c.History = nil
		case n < len(c.History):
			c.History = c.History[len(c.History)-n:]
		}
	}
	if !withArtifacts {
		c.Artifacts = nil
	}
	return &c
}

// LastUserText returns the text of the most recent message from the peer,
// for inbox listings.
func LastUserText(t *a2a.Task) string {
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := t.History[i]; m != nil && m.Role == a2a.MessageRoleUser {
			return MessageText(m)
		}
	}
	return ""
}

// MessageText joins the text parts of a message with newlines.
func MessageText(m *a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if txt, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(txt))
		}
	}
	return b.String()
}
