package webhook

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// FuzzAnswer checks the parser of webhook answers: anything is either
// refused as an invalid agent response, or becomes a message with parts or
// a status an agent may set.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"completed","agent":"a","result":"text"}`,
		`{"status":"success","result":{"k":[1,2]}}`,
		`{"status":"error","result":"why"}`,
		`{"status":"input-required","result":"?"}`,
		`{"status":"rejected"}`,
		`{"status":"done","result":null}`,
		`{"status":"weird"}`, `[]`, `"x"`, `{"result":"\u0000"}`, ``,
	} {
		f.Add([]byte(s))
	}
	task := &switchboard.Task{A2A: a2a.Task{ID: "t", ContextID: "c"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := answerEvent(task, data)
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE {
				t.Fatalf("error %v is not an invalid agent response", err)
			}
			return
		}
		switch e := ev.(type) {
		case *a2a.Message:
			if len(e.Parts) == 0 || e.Role != a2a.MessageRoleAgent || e.TaskID != "t" {
				t.Fatalf("message %+v", e)
			}
		case *a2a.TaskStatusUpdateEvent:
			switch e.Status.State {
			case a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateInputRequired:
			default:
				t.Fatalf("state %s", e.Status.State)
			}
		default:
			t.Fatalf("event %T", ev)
		}
	})
}
