package main

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	doc := json.RawMessage(`{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"a <b> & c"}]}],
		"n":null,"list":[1,{"k":[true]}],"obj":{"z":1,"a":2}}`)
	for path, want := range map[string]string{
		".id":                         "t1",
		".status.state":               "TASK_STATE_COMPLETED",
		".artifacts[0].parts[0].text": "a <b> & c",
		".artifacts.length":           "1",
		".id.length":                  "2",
		".list[-1].k[0]":              "true",
		".n":                          "null",
		".obj":                        `{"z":1,"a":2}`,
		".list":                       `[1,{"k":[true]}]`,
	} {
		v, ok, err := lookup(doc, path)
		if err != nil || !ok || text(v) != want {
			t.Errorf("%s: %q %v %v, want %q", path, text(v), ok, err, want)
		}
	}
	for _, path := range []string{".missing", ".n.x", ".list[2]", ".list[-3]", ".id.x", ".status[0]"} {
		if v, ok, err := lookup(doc, path); ok || err != nil {
			t.Errorf("%s: %q %v %v, want no value", path, v, ok, err)
		}
	}
	if _, _, err := lookup(doc, "status"); err == nil {
		t.Error("a path without a leading dot was taken")
	}
}

func TestEvent(t *testing.T) {
	for in, want := range map[string]string{
		`{"task":{"id":"t1","status":{"state":"TASK_STATE_SUBMITTED"}}}`:                         "task TASK_STATE_SUBMITTED t1",
		`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}`:             "statusUpdate TASK_STATE_COMPLETED t1",
		`{"artifactUpdate":{"artifact":{"parts":[{"text":"a <b>"},{"data":{}},{"text":"\""}]}}}`: `artifactUpdate "a <b>\""`,
		`{"message":{"parts":[{"text":"hi"}]}}`:                                                  `message "hi"`,
		`{"task":{"id":"t2"}}`:                                                                   "task undefined t2",
		`{"other":1}`:                                                                            `unknown {"other":1}`,
	} {
		if got := event(json.RawMessage(in)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
