package hub

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// TestOfferFrameAsEncodingJSON checks that an offer written in one pass
// says what the connector protocol's own encoding says, for a send with
// awkward text, a cancel, and a send without a message.
func TestOfferFrameAsEncodingJSON(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("a <b> & \"c\" \u2028 \xff"), a2a.NewDataPart(map[string]any{"k": 1}))
	msg.TaskID, msg.ContextID = "t<1>", "c&1"
	send := &a2a.SendMessageRequest{Message: msg, Metadata: map[string]any{"switchboard": map[string]any{"peer": "p<"}},
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}}
	d := &switchboard.Delivery{ID: "d-1"}
	for name, o := range map[string]*switchboard.Offer{
		"send":    {Delivery: d, Send: send},
		"cancel":  {Delivery: d, Cancel: &a2a.CancelTaskRequest{ID: "t1"}},
		"no send": {Delivery: d},
	} {
		got, err := offerFrame(o)
		if err != nil {
			t.Fatal(name, err)
		}
		req := connproto.Request{JSONRPC: "2.0", ID: d.ID, Method: connproto.MethodSendMessage}
		if o.Cancel != nil {
			req.Method, req.Params = connproto.MethodCancelTask, o.Cancel
		} else if o.Send != nil {
			req.Params = o.Send
		}
		want, err := connproto.Encode(req)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", name, err, got)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
