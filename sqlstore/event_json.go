package sqlstore

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// encodeEvent returns the A2A 1.0 StreamResponse JSON of e, byte for byte as
// a2a.StreamResponse's MarshalJSON writes it, but encoding the event once:
// that method marshals a wrapper around the event, and encoding/json then
// checks and compacts the wrapper's bytes again, a second pass over every
// message the event carries.
func encodeEvent(e a2a.Event) ([]byte, error) {
	key := eventKey(e)
	if key == "" {
		return json.Marshal(a2a.StreamResponse{Event: e}) // its error names what is wrong
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return wrapEvent(key, b), nil
}

// wrapEvent returns {"key":event}.
func wrapEvent(key string, event []byte) []byte {
	out := make([]byte, 0, len(key)+len(event)+5)
	out = append(out, `{"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, event...)
	return append(out, '}')
}

// eventKey returns the StreamResponse field that holds e, or "" for an
// event it cannot hold (an unknown type or a nil pointer).
func eventKey(e a2a.Event) string {
	switch v := e.(type) {
	case *a2a.Message:
		if v != nil {
			return "message"
		}
	case *a2a.Task:
		if v != nil {
			return "task"
		}
	case *a2a.TaskStatusUpdateEvent:
		if v != nil {
			return "statusUpdate"
		}
	case *a2a.TaskArtifactUpdateEvent:
		if v != nil {
			return "artifactUpdate"
		}
	}
	return ""
}
