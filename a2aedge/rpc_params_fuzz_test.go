package a2aedge_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// unaryMethods are the methods that answer with one JSON-RPC response, in
// both versions: the streaming ones answer with an event stream.
var unaryMethods = []string{
	"SendMessage", "GetTask", "ListTasks", "CancelTask",
	"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
	"ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard",
	"message/send", "tasks/get", "tasks/cancel",
	"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
	"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
	"agent/getAuthenticatedExtendedCard",
}

// FuzzMethodParams feeds arbitrary params to every unary method of both
// versions, with push notifications on, through the whole HTTP pipeline
// ("$TASK" in the params names a new task of the caller's): whatever
// arrives, the answer is one JSON-RPC response with a result or an error,
// and the error is never an internal one. FuzzSendMessage checks more of
// the send methods.
func FuzzMethodParams(f *testing.F) {
	for _, seed := range []struct {
		method int
		params string
	}{
		{1, `{"id":"$TASK","historyLength":2}`},
		{1, `{"id":"$TASK","historyLength":-1}`},
		{2, `{"pageSize":5,"status":"TASK_STATE_SUBMITTED","includeArtifacts":true,"statusTimestampAfter":"2026-01-01T00:00:00Z","contextId":"c"}`},
		{2, `{"pageToken":"bm9wZQ","pageSize":0}`},
		{3, `{"id":"$TASK","metadata":{"why":"x"}}`},
		{4, `{"taskId":"$TASK","url":"https://push.example/hook","token":"t","authentication":{"scheme":"Bearer","credentials":"c"}}`},
		{4, `{"taskId":"$TASK","id":"p1","url":"http://127.0.0.1/x"}`},
		{5, `{"taskId":"$TASK","id":"p1"}`},
		{6, `{"taskId":"$TASK","pageSize":1}`},
		{7, `{"taskId":"$TASK","id":"p1"}`},
		{8, `{}`},
		{10, `{"id":"$TASK","historyLength":1}`},
		{11, `{"id":"$TASK"}`},
		{12, `{"taskId":"$TASK","pushNotificationConfig":{"url":"https://push.example/hook","token":"t","authentication":{"schemes":["Bearer"]}}}`},
		{13, `{"id":"$TASK","pushNotificationConfigId":"p1"}`},
		{14, `{"id":"$TASK"}`},
		{15, `{"id":"$TASK","pushNotificationConfigId":"p1"}`},
		{16, `null`},
		{0, `[]`},
		{9, `"x"`},
	} {
		f.Add(uint8(seed.method), seed.params)
	}
	h := facetest.New(f, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	// Each input makes a task of the one peer: past a few thousand inputs
	// the peer would meet its quota of unfinished tasks, which quota_test.go
	// tests, and every later "$TASK" would fail to be made.
	h.Tasks.MaxOpenTasksPerPeer, h.Tasks.MaxPeerBytes = 0, 0
	g := h.Agent("fuzz")
	tok := h.PeerToken(g, "fuzzer")
	f.Fuzz(func(t *testing.T, method uint8, params string) {
		name := unaryMethods[int(method)%len(unaryMethods)]
		params = strings.ReplaceAll(params, "$TASK", facetest.NewTaskID(t, h, tok))
		body := `{"jsonrpc":"2.0","id":7,"method":"` + name + `","params":` + params + `}`
		checkAnswer(t, body, facetest.ServeRPC(h, tok, body), "7")
	})
}
