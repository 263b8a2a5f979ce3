package promtest_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/promtest"
)

const head = "# HELP x_total X.\n# TYPE x_total counter\n"

func TestParseOK(t *testing.T) {
	in := head + "x_total{a=\"q\\\"\\\\\\n\",b=\"\"} 3\n" +
		"# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3.5\nh_count 2\n"
	s, err := promtest.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s["x_total{a=\"q\"\\\n\",b=\"\"}"], 3.0; got != want {
		t.Fatalf("got %v, want %v (%v)", got, want, s)
	}
	if got, want := s["h_count"], 2.0; got != want {
		t.Fatalf("h_count: got %v, want %v", got, want)
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]string{
		"NoNewline":        head + "x_total 1",
		"NoHelp":           "# TYPE x_total counter\nx_total 1\n",
		"NoType":           "# HELP x_total X.\nx_total 1\n",
		"UnknownType":      "# HELP x X.\n# TYPE x summary\nx 1\n",
		"EmptyLine":        head + "\nx_total 1\n",
		"OtherFamily":      head + "y_total 1\n",
		"Duplicate":        head + "x_total 1\nx_total 2\n",
		"FamilyTwice":      head + "x_total 1\n" + head,
		"Negative":         head + "x_total -1\n",
		"BadValue":         head + "x_total one\n",
		"Timestamp":        head + "x_total 1 1700000000\n",
		"BadEscape":        head + "x_total{a=\"\\t\"} 1\n",
		"Unquoted":         head + "x_total{a=b} 1\n",
		"RepeatedLabel":    head + "x_total{a=\"1\",a=\"2\"} 1\n",
		"BadLabelName":     head + "x_total{1a=\"1\"} 1\n",
		"CounterSuffix":    head + "x_total_sum 1\n",
		"HistNoInf":        "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
		"HistNotCumul":     "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"HistLEOrder":      "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"HistCountWrong":   "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
		"HistNoCount":      "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\n",
		"UnknownComment":   head + "# something\nx_total 1\n",
		"SampleBeforeHelp": "x_total 1\n" + head,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := promtest.Parse(strings.NewReader(in)); err == nil {
				t.Fatalf("accepted:\n%s", in)
			}
		})
	}
}
