package agenthttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// handlePush receives a push notification about a task one of our agents
// sent (POST {address}/push): the body is an A2A 1.0 StreamResponse or an
// A2A 0.3 task or update event; the notification token is the one the
// sender registered with the push config (A2A-Notification-Token,
// X-A2A-Notification-Token, or Authorization: Bearer). Answers: 200
// {"ok":true}; 400 a body that is no push; 401 a token that does not match
// the task's; 404 a task the agent never sent (or no agent); 413 a body
// over the limit; 429 with Retry-After past the rate limit (per agent and
// sending address, counted before the token is checked, so that guessing
// tokens is limited too); 503 when the push could not be stored (the
// pusher retries).
func (s *Face) handlePush(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.AgentFromPath(w, r)
	if !ok {
		return
	}
	// A limiter that cannot count lets the request through (it logs and
	// counts that itself).
	if ok, retry, _ := s.Limiter.Allow(r.Context(), s.pushLimitKey(agent, r)); !ok {
		secs := max(int(math.Ceil(retry.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.WriteError(w, r, switchboard.Errorf(switchboard.ERATELIMITED, "rate limit exceeded: retry in %d s", secs))
		return
	}
	body, err := s.ReadBody(w, r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	taskID, ev, err := parsePushBody(body)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if _, err := s.Outbox.ReceivePush(r.Context(), agent.ID, notificationToken(r), taskID, ev); err != nil {
		if switchboard.ErrorCode(err) == switchboard.EINTERNAL {
			// Nothing was stored (the record, and the wake it queues, are
			// written together): the pusher should try again.
			s.LogInternal(r, err)
			w.Header().Set("Retry-After", "5")
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, ownerapi.Error{Error: "the push could not be stored: retry later"})
			return
		}
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// pushLimitKey is the rate limit key of a push: the receiving agent and
// the address the push came from.
func (s *Face) pushLimitKey(agent *switchboard.Agent, r *http.Request) string {
	return "push/" + agent.ID + "/" + s.ClientKey(r)
}

// notificationToken returns the token a push presented.
func notificationToken(r *http.Request) string {
	for _, h := range []string{"A2A-Notification-Token", "X-A2A-Notification-Token"} {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return v
		}
	}
	return httpapi.BearerToken(r)
}

// parsePushBody reads a push notification body: an A2A 1.0 StreamResponse
// ({"task"}, {"statusUpdate"}, {"artifactUpdate"} or {"message"}), or an
// A2A 0.3 event (a task, a "status-update", an "artifact-update" or a
// "message", told apart by "kind"; a task without "kind" is accepted too).
// It returns the task the push is about and the event in the 1.0 model.
func parsePushBody(data []byte) (a2a.TaskID, a2a.Event, error) {
	bad := func(format string, args ...any) (a2a.TaskID, a2a.Event, error) {
		return "", nil, switchboard.Errorf(switchboard.EINVALID, "not a push notification: "+format, args...)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return bad("the body must be a JSON object")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return bad("%s", err.Error())
	}
	var ev a2a.Event
	if raw, ok := probe["kind"]; ok {
		var kind string
		if err := json.Unmarshal(raw, &kind); err != nil {
			return bad("kind must be a string")
		}
		e, err := parseV03Event(kind, data)
		if err != nil {
			return bad("%s", err.Error())
		}
		ev = e
	} else if hasAny(probe, "task", "statusUpdate", "artifactUpdate", "message") {
		var sr a2a.StreamResponse
		if err := json.Unmarshal(data, &sr); err != nil {
			return bad("%s", err.Error())
		}
		ev = sr.Event
	} else if hasAny(probe, "id") && hasAny(probe, "status") {
		e, err := parseV03Event("task", data)
		if err != nil {
			return bad("%s", err.Error())
		}
		ev = e
	} else {
		return bad("expected a StreamResponse or an A2A 0.3 task or event")
	}
	id := pushTaskID(ev)
	if id == "" {
		return bad("it names no task")
	}
	return id, ev, nil
}

func hasAny(m map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// parseV03Event decodes an A2A 0.3 event of the given kind into the 1.0 model.
func parseV03Event(kind string, data []byte) (a2a.Event, error) {
	switch kind {
	case "task":
		var t legacy.Task
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, err
		}
		return a2av0.ToV1Task(&t)
	case "status-update":
		var e legacy.TaskStatusUpdateEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		return a2av0.ToV1TaskStatusUpdateEvent(&e)
	case "artifact-update":
		var e legacy.TaskArtifactUpdateEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		return a2av0.ToV1TaskArtifactUpdateEvent(&e)
	case "message":
		var m legacy.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return a2av0.ToV1Message(&m)
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// pushTaskID returns the id of the task an event is about.
func pushTaskID(ev a2a.Event) a2a.TaskID {
	switch e := ev.(type) {
	case *a2a.Task:
		if e != nil {
			return e.ID
		}
	case *a2a.TaskStatusUpdateEvent:
		if e != nil {
			return e.TaskID
		}
	case *a2a.TaskArtifactUpdateEvent:
		if e != nil {
			return e.TaskID
		}
	case *a2a.Message:
		if e != nil {
			return e.TaskID
		}
	}
	return ""
}
