package metrics_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/metrics"
)

func TestValidNames(t *testing.T) {
	tests := map[string]struct{ metric, label bool }{
		"switchboard_tasks_total": {true, true},
		"_private":                {true, true},
		"job:rate5m":              {true, false},
		":leading_colon":          {true, false},
		"a1":                      {true, true},
		"":                        {false, false},
		"1a":                      {false, false},
		"has-dash":                {false, false},
		"has space":               {false, false},
		"é":                       {false, false},
	}
	for name, want := range tests {
		if got := metrics.ValidMetricName(name); got != want.metric {
			t.Errorf("ValidMetricName(%q) = %v, want %v", name, got, want.metric)
		}
		if got := metrics.ValidLabelName(name); got != want.label {
			t.Errorf("ValidLabelName(%q) = %v, want %v", name, got, want.label)
		}
	}
}
