package metrics

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Metric is one metric family that a Registry can write. Only the types of
// this package implement it.
type Metric interface {
	// Name returns the family's name.
	Name() string
	// writeText writes the family: its HELP and TYPE lines, then every
	// series.
	writeText(w *textWriter)
}

// Label is one label of a family with every value it may take. A family
// with labels holds one series per combination of values, in the order of
// the values, the last label varying fastest.
type Label struct {
	Name   string
	Values []string
}

// family is what every metric shares: name, help, type and the rendered
// label sets of its series.
type family struct {
	name, help, typ string
	labels          []Label
	// series holds, per series, its label pairs as written between braces
	// (`a="x",b="y"`); one empty string for a family without labels.
	series []string
}

// Name returns the family's name.
func (f *family) Name() string { return f.name }

// newFamily checks the name and labels and renders every series' label
// set. It panics on invalid input: families are made at start-up, by code.
func newFamily(name, help, typ string, labels []Label) family {
	if !ValidMetricName(name) {
		panic(fmt.Sprintf("metrics: invalid metric name %q", name))
	}
	seen := make(map[string]bool)
	n := 1
	for _, l := range labels {
		if !ValidLabelName(l.Name) || strings.HasPrefix(l.Name, "__") {
			panic(fmt.Sprintf("metrics: %s: invalid label name %q", name, l.Name))
		}
		if seen[l.Name] {
			panic(fmt.Sprintf("metrics: %s: label %q twice", name, l.Name))
		}
		seen[l.Name] = true
		if len(l.Values) == 0 {
			panic(fmt.Sprintf("metrics: %s: label %q has no values", name, l.Name))
		}
		vals := make(map[string]bool)
		for _, v := range l.Values {
			if vals[v] {
				panic(fmt.Sprintf("metrics: %s: label %q has value %q twice", name, l.Name, v))
			}
			vals[v] = true
		}
		n *= len(l.Values)
	}
	f := family{name: name, help: help, typ: typ, labels: labels, series: make([]string, n)}
	for i := range n {
		f.series[i] = renderLabels(labels, i)
	}
	return f
}

// renderLabels renders the label pairs of series i.
func renderLabels(labels []Label, i int) string {
	pairs := make([]string, len(labels))
	for k := len(labels) - 1; k >= 0; k-- {
		vals := labels[k].Values
		pairs[k] = labels[k].Name + `="` + escapeLabel(vals[i%len(vals)]) + `"`
		i /= len(vals)
	}
	return strings.Join(pairs, ",")
}

// index returns the series of the given label values; it panics if a value
// is not one of its label's.
func (f *family) index(values []string) int {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s: %d label values for %d labels", f.name, len(values), len(f.labels)))
	}
	i := 0
	for k, l := range f.labels {
		pos := -1
		for j, v := range l.Values {
			if v == values[k] {
				pos = j
				break
			}
		}
		if pos < 0 {
			panic(fmt.Sprintf("metrics: %s: %q is not a value of label %q", f.name, values[k], l.Name))
		}
		i = i*len(l.Values) + pos
	}
	return i
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// textWriter writes the text format. Errors stick in the bufio.Writer and
// come out of its Flush.
type textWriter struct {
	w   *bufio.Writer
	num []byte // scratch for number formatting
}

// header writes the HELP and TYPE lines of f.
func (t *textWriter) header(f *family) {
	t.w.WriteString("# HELP ")
	t.w.WriteString(f.name)
	t.w.WriteByte(' ')
	t.w.WriteString(helpEscaper.Replace(f.help))
	t.w.WriteString("\n# TYPE ")
	t.w.WriteString(f.name)
	t.w.WriteByte(' ')
	t.w.WriteString(f.typ)
	t.w.WriteByte('\n')
}

// sampleStart writes a sample's name, suffix and label set up to the value;
// extra is one more label pair (a histogram's le), or "".
func (t *textWriter) sampleStart(name, suffix, labels, extra string) {
	t.w.WriteString(name)
	t.w.WriteString(suffix)
	if labels != "" || extra != "" {
		t.w.WriteByte('{')
		t.w.WriteString(labels)
		if labels != "" && extra != "" {
			t.w.WriteByte(',')
		}
		t.w.WriteString(extra)
		t.w.WriteByte('}')
	}
	t.w.WriteByte(' ')
}

// sampleUint writes one sample with an integer value.
func (t *textWriter) sampleUint(name, suffix, labels, extra string, v uint64) {
	t.sampleStart(name, suffix, labels, extra)
	t.num = strconv.AppendUint(t.num[:0], v, 10)
	t.w.Write(t.num)
	t.w.WriteByte('\n')
}

// sampleFloat writes one sample with a float value.
func (t *textWriter) sampleFloat(name, suffix, labels, extra string, v float64) {
	t.sampleStart(name, suffix, labels, extra)
	t.num = appendFloat(t.num[:0], v)
	t.w.Write(t.num)
	t.w.WriteByte('\n')
}

// appendFloat formats v as the text format spells numbers.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
