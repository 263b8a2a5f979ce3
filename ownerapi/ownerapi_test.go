package ownerapi_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TestRequestsOmitAbsentFields checks that a request body carries only the
// fields that are set: PATCH and PUT change what they name and nothing else.
func TestRequestsOmitAbsentFields(t *testing.T) {
	name, off, zero := "n", false, 0.0
	for label, tc := range map[string]struct {
		body any
		want string
	}{
		"EmptyAgent":     {ownerapi.AgentRequest{}, `{}`},
		"AgentName":      {ownerapi.AgentRequest{Name: &name}, `{"name":"n"}`},
		"AccountEnable":  {ownerapi.AccountUpdate{Disabled: &off}, `{"disabled":false}`},
		"WakeDebounce":   {ownerapi.WakeUpdate{DebounceSeconds: &zero}, `{"debounce_seconds":0}`},
		"OutboundResult": {ownerapi.OutboundResult{Source: "poll"}, `{"source":"poll"}`},
		"Reply":          {ownerapi.Reply{Text: "t", State: "completed"}, `{"text":"t","state":"completed","force":false}`},
	} {
		t.Run(label, func(t *testing.T) {
			got, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
