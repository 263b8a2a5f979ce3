package wake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

func TestApplyUpdate(t *testing.T) {
	now := time.Now()
	u := func(s string) *string { return &s }
	c, err := wake.ApplyUpdate("a1", nil, wake.Update{URL: u("https://w.example/fire")}, now, nil)
	if err != nil || c.Preset != wake.PresetGeneric || c.Debounce != 10*time.Second || c.MaxPerHour != 0 ||
		c.KeyHeader != "Authorization" || c.KeyPrefix != "Bearer " || c.CLICommand != "switchboard" || c.OpenClawAgentID != "main" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	cc := wake.PresetClaudeCode
	c2, err := wake.ApplyUpdate("a1", c, wake.Update{Preset: &cc, Key: u("k")}, now, nil)
	if err != nil || c2.Debounce != 20*time.Second || c2.MaxPerHour != 25 || c2.URL != c.URL {
		t.Fatalf("claude-code defaults: %+v %v", c2, err)
	}
	n := 3
	c3, err := wake.ApplyUpdate("a1", c2, wake.Update{MaxPerHour: &n, KeyPrefix: u("")}, now, nil)
	if err != nil || c3.Debounce != 20*time.Second || c3.MaxPerHour != 3 || c3.Key != "k" || c3.KeyPrefix != "" {
		t.Fatalf("partial update: %+v %v", c3, err)
	}
	for name, upd := range map[string]wake.Update{
		"no url":         {},
		"credentials":    {URL: u("https://u:p@w.example/")},
		"scheme":         {URL: u("file:///etc/passwd")},
		"newline in key": {URL: u("https://w.example/"), Key: u("a\nX-Evil: 1")},
		"header name":    {URL: u("https://w.example/"), KeyHeader: u("X Bad")},
		"agent id":       {URL: u("https://w.example/"), OpenClawAgentID: u("a b")},
		"template":       {URL: u("https://w.example/"), Preset: &cc, BodyTemplate: u("{}")},
	} {
		if _, err := wake.ApplyUpdate("a1", nil, upd, now, nil); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWakeCheckScheme: a wake URL must be https unless plain http is
// allowed (the operator opened the network guard).
func TestWakeCheckScheme(t *testing.T) {
	for _, tc := range []struct {
		url       string
		allowHTTP bool
		ok        bool
	}{
		{"https://wake.example/hook", false, true},
		{"https://wake.example/hook", true, true},
		{"http://wake.example/hook", false, false},
		{"HTTP://wake.example/hook", false, false},
		{"http://10.0.0.5:8080/hook", true, true},
	} {
		c := &switchboard.WakeConfig{URL: tc.url}
		err := wake.CheckScheme(c, tc.allowHTTP)
		if (err == nil) != tc.ok {
			t.Errorf("CheckScheme(%q, %v) = %v", tc.url, tc.allowHTTP, err)
		}
		if err != nil && (switchboard.ErrorCode(err) != switchboard.EINVALID || !strings.Contains(err.Error(), "must be https")) {
			t.Errorf("CheckScheme(%q): unclear error %v", tc.url, err)
		}
	}
}
