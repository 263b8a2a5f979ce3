package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/promtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
	"go.yaml.in/yaml/v3"
)

// The files of deploy/, from this package's directory.
const (
	dashboardFile = "../../deploy/grafana/switchboard.json"
	alertsFile    = "../../deploy/prometheus/alerts.yaml"
)

// prometheusOwn are series Prometheus makes itself, not read from /metrics.
var prometheusOwn = []string{"up"}

// alertRules reads the alerting rules of the alerts file.
func alertRules(t *testing.T) []struct{ Alert, Expr string } {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var rules []struct{ Alert, Expr string }
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// dashboardQuery is one query of the dashboard: a panel's target, or a
// variable's.
type dashboardQuery struct {
	where, expr string
	variable    bool // a variable's query, in Grafana's label_values(METRIC, LABEL) form
}

// dashboardQueries reads every query of the dashboard, in panels nested
// in rows too.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string
		Targets []struct{ Expr string }
		Panels  json.RawMessage
	}
	var d struct {
		Panels     []json.RawMessage
		Templating struct {
			List []struct {
				Name  string
				Type  string
				Query json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []dashboardQuery
	var walk func([]json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatalf("%s: panel: %v", dashboardFile, err)
			}
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{where: "panel " + p.Title, expr: tg.Expr})
			}
			var nested []json.RawMessage
			if len(p.Panels) > 0 && json.Unmarshal(p.Panels, &nested) == nil {
				walk(nested)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var s string
			if json.Unmarshal(v.Query, &s) != nil {
				t.Fatalf("variable %s: query %s", v.Name, v.Query)
			}
			q.Query = s
		}
		out = append(out, dashboardQuery{where: "variable " + v.Name, expr: q.Query, variable: true})
	}
	return out
}

var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlVars     = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)
	promqlMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\[\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promqlTokens   = regexp.MustCompile(`[0-9][0-9A-Za-z_.]*|[A-Za-z_:][A-Za-z0-9_:]*\s*\(?`)
	labelValues    = regexp.MustCompile(`^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(?:\{[^}]*\})?\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"}
)

// metricNames returns the metric names a PromQL expression reads: what is
// left once strings, Grafana's variables, label matchers, ranges and
// grouping clauses are taken out, apart from functions (a name before
// "("), keywords and numbers.
func metricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, `""`)
	expr = promqlVars.ReplaceAllString(expr, "")
	expr = promqlMatchers.ReplaceAllString(expr, "")
	expr = promqlRanges.ReplaceAllString(expr, "")
	expr = promqlGrouping.ReplaceAllString(expr, "")
	var names []string
	for _, tok := range promqlTokens.FindAllString(expr, -1) {
		function := strings.HasSuffix(tok, "(")
		tok = strings.TrimSpace(tok)
		if tok[0] >= '0' && tok[0] <= '9' || function || slices.Contains(promqlKeywords, strings.ToLower(tok)) {
			continue
		}
		if !slices.Contains(names, tok) {
			names = append(names, tok)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	cases := map[string][]string{
		`up{job="switchboard"} == 0`: {"up"},
		`sum by (instance) (rate(a_total{code="5xx",instance=~"$instance"}[$__rate_interval])) / sum without (x) (b)`: {"a_total", "b"},
		`max(q{state="offered"}) > 0 and on() sum(increase(c_count[15m])) == 0`:                                       {"q", "c_count"},
		`histogram_quantile(0.99, sum by (le) (rate(h_bucket[5m]))) > 0.5`:                                            {"h_bucket"},
		`min by (instance, name) (e_seconds) < 14 * 86400`:                                                            {"e_seconds"},
		`delta(max(q{state="queued"})[1h:5m]) > 0 and x_or_y`:                                                         {"q", "x_or_y"},
		`time() - p{instance=~"$instance"}`:                                                                           {"p"},
		`sum(rate(w{outcome=~"failed|dropped"}[15m])) / sum(rate(w[15m])) > 2e-1`:                                     {"w"},
	}
	for expr, want := range cases {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %v, want %v", expr, got, want)
		}
	}
}

// exposedNames scrapes url and returns the name of every series (a
// histogram's _bucket, _sum and _count each).
func exposedNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	samples, err := promtest.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for key := range samples {
		name, _, _ := strings.Cut(key, "{")
		names[name] = true
	}
	return names
}

// TestDashboardAndAlertsReadRealMetrics: every metric the Grafana dashboard
// and the alerting rules read is one a live server exposes (with HTTPS, so
// that the certificates' metric is there), every panel's query is of the
// instances chosen in the dashboard's instance variable, and, where
// Debian's promtool is installed, the rules pass promtool check rules and
// so do the dashboard's queries, made into recording rules.
func TestDashboardAndAlertsReadRealMetrics(t *testing.T) {
	certFile, keyFile := writeSelfSigned(t, "files.test")
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.MetricsAddr, c.HTTPSAddr, c.TLSCertFile, c.TLSKeyFile = "127.0.0.1:0", "127.0.0.1:0", certFile, keyFile
	})
	var exposed map[string]bool
	testwait.For(t, "the certificate's metric", func() bool {
		exposed = exposedNames(t, m.MetricsURL()+"/metrics")
		return exposed["switchboard_tls_certificate_expiry_seconds"]
	})

	rules := alertRules(t)
	queries := dashboardQueries(t)
	if len(rules) < 8 || len(queries) < 30 {
		t.Fatalf("%d rules and %d dashboard queries: the files were not read", len(rules), len(queries))
	}
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", where, expr)
		}
		for _, name := range names {
			if !exposed[name] && !slices.Contains(prometheusOwn, name) {
				t.Errorf("%s reads %s, which /metrics does not expose", where, name)
			}
		}
	}
	for _, r := range rules {
		check("alert "+r.Alert, r.Expr)
	}
	hasInstanceVar := false
	for _, q := range queries {
		if q.variable {
			mm := labelValues.FindStringSubmatch(q.expr)
			if mm == nil {
				t.Errorf("%s: %q is not label_values(METRIC, LABEL)", q.where, q.expr)
				continue
			}
			hasInstanceVar = hasInstanceVar || strings.HasSuffix(q.where, " instance")
			check(q.where, mm[1])
			continue
		}
		check(q.where, q.expr)
		for _, sel := range regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*\{[^}]*\}|[A-Za-z_:][A-Za-z0-9_:]*`).FindAllString(promqlRanges.ReplaceAllString(q.expr, ""), -1) {
			if name, _, _ := strings.Cut(sel, "{"); exposed[name] && !strings.Contains(sel, `instance=~"$instance"`) {
				t.Errorf("%s: %s is not filtered by the instance variable", q.where, sel)
			}
		}
	}
	if !hasInstanceVar {
		t.Error("the dashboard has no instance variable")
	}

	t.Run("promtool", func(t *testing.T) {
		promtool, err := exec.LookPath("promtool")
		if err != nil {
			t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
		}
		if out, err := exec.Command(promtool, "check", "rules", alertsFile).CombinedOutput(); err != nil {
			t.Fatalf("promtool check rules %s: %v\n%s", alertsFile, err, out)
		}
		// The dashboard's queries, with Grafana's variables given values,
		// as recording rules: promtool parses each.
		var b strings.Builder
		b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
		for i, q := range queries {
			if q.variable {
				continue
			}
			expr := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*").Replace(q.expr)
			quoted, _ := json.Marshal(expr)
			fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, quoted)
		}
		file := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
		must(t, os.WriteFile(file, []byte(b.String()), 0o600))
		if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
			t.Fatalf("the dashboard's queries as rules: %v\n%s", err, out)
		}
	})
}
