package promtest

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/metrics"
)

// Parse reads an exposition and returns every sample's value by its series
// key: the sample name and, when it has labels, its label pairs in the
// order written, as in `name{a="x",b="y"}` (label values unescaped). It
// checks that:
//
//   - every line is a HELP, a TYPE or a sample, and the input ends in a
//     newline;
//   - each family has one HELP and then one TYPE line (counter, gauge or
//     histogram) before its samples, and appears once;
//   - sample names belong to the family (histograms: _bucket, _sum,
//     _count), label names are valid and unique, values are numbers;
//   - no series appears twice; counters are not negative;
//   - each histogram series has increasing le bounds ending in +Inf,
//     cumulative counts that never fall, and a _count equal to the +Inf
//     bucket, and a _sum.
func Parse(r io.Reader) (map[string]float64, error) {
	p := &parser{out: make(map[string]float64), families: make(map[string]bool)}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("the exposition does not end in a newline")
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := p.line(sc.Text()); err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n, sc.Text(), err)
		}
	}
	if err := p.endFamily(); err != nil {
		return nil, err
	}
	return p.out, sc.Err()
}

type parser struct {
	out      map[string]float64
	families map[string]bool

	// The family being read.
	name, typ string
	helped    bool
	hist      map[string]*histSeries // histogram series by label set without le
}

type histSeries struct {
	lastLE    float64
	lastCount float64
	buckets   int
	infCount  float64
	hasInf    bool
	sum       bool
	count     *float64
}

func (p *parser) line(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty line")
	case strings.HasPrefix(s, "# HELP "):
		name, _, _ := strings.Cut(s[len("# HELP "):], " ")
		if err := p.endFamily(); err != nil {
			return err
		}
		if !metrics.ValidMetricName(name) {
			return fmt.Errorf("invalid metric name")
		}
		if p.families[name] {
			return fmt.Errorf("family %s appears twice", name)
		}
		p.families[name] = true
		p.name, p.typ, p.helped, p.hist = name, "", true, make(map[string]*histSeries)
		return checkHelp(s)
	case strings.HasPrefix(s, "# TYPE "):
		name, typ, ok := strings.Cut(s[len("# TYPE "):], " ")
		if !ok || name != p.name || !p.helped || p.typ != "" {
			return fmt.Errorf("TYPE without its HELP just before")
		}
		switch typ {
		case "counter", "gauge", "histogram":
		default:
			return fmt.Errorf("unexpected type %q", typ)
		}
		p.typ = typ
		return nil
	case strings.HasPrefix(s, "#"):
		return fmt.Errorf("unexpected comment")
	}
	return p.sample(s)
}

func checkHelp(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 >= len(s) || (s[i+1] != '\\' && s[i+1] != 'n') {
				return fmt.Errorf("bad escape in HELP")
			}
			i++
		}
	}
	return nil
}

func (p *parser) sample(s string) error {
	if p.typ == "" {
		return fmt.Errorf("sample before HELP and TYPE")
	}
	i := strings.IndexAny(s, "{ ")
	if i < 0 {
		return fmt.Errorf("no value")
	}
	name, rest := s[:i], s[i:]
	var pairs [][2]string
	if rest[0] == '{' {
		var err error
		pairs, rest, err = parseLabels(rest[1:])
		if err != nil {
			return err
		}
	}
	if !strings.HasPrefix(rest, " ") || strings.Contains(rest[1:], " ") {
		return fmt.Errorf("want exactly one space before the value, and no timestamp")
	}
	v, err := strconv.ParseFloat(rest[1:], 64)
	if err != nil {
		return fmt.Errorf("value: %w", err)
	}
	suffix, ok := strings.CutPrefix(name, p.name)
	if !ok {
		return fmt.Errorf("sample of another family than %s", p.name)
	}
	key := seriesKey(name, pairs)
	if _, dup := p.out[key]; dup {
		return fmt.Errorf("series %s twice", key)
	}
	p.out[key] = v
	switch p.typ {
	case "counter":
		if suffix != "" || v < 0 || math.IsNaN(v) {
			return fmt.Errorf("counter sample must be named as its family and not negative")
		}
	case "gauge":
		if suffix != "" {
			return fmt.Errorf("gauge sample must be named as its family")
		}
	case "histogram":
		return p.histSample(suffix, pairs, v)
	}
	return nil
}

func (p *parser) histSample(suffix string, pairs [][2]string, v float64) error {
	var le string
	var rest [][2]string
	for _, kv := range pairs {
		if kv[0] == "le" {
			le = kv[1]
		} else {
			rest = append(rest, kv)
		}
	}
	key := seriesKey("", rest)
	h := p.hist[key]
	if h == nil {
		h = &histSeries{lastLE: math.Inf(-1)}
		p.hist[key] = h
	}
	if h.count != nil {
		return fmt.Errorf("sample after the series' _count")
	}
	switch suffix {
	case "_bucket":
		if le == "" {
			return fmt.Errorf("bucket without le")
		}
		b, err := strconv.ParseFloat(le, 64)
		if err != nil || b <= h.lastLE || h.hasInf {
			return fmt.Errorf("le %q does not follow %v", le, h.lastLE)
		}
		if v < h.lastCount || v != math.Trunc(v) {
			return fmt.Errorf("bucket count %v falls below %v or is not whole", v, h.lastCount)
		}
		h.lastLE, h.lastCount, h.buckets = b, v, h.buckets+1
		if math.IsInf(b, 1) {
			h.hasInf, h.infCount = true, v
		}
	case "_sum":
		if le != "" || !h.hasInf || h.sum {
			return fmt.Errorf("_sum must follow the +Inf bucket, once")
		}
		h.sum = true
	case "_count":
		if le != "" || !h.sum || v != h.infCount {
			return fmt.Errorf("_count must follow _sum and equal the +Inf bucket (%v)", h.infCount)
		}
		h.count = &v
	default:
		return fmt.Errorf("histogram sample suffix %q", suffix)
	}
	return nil
}

func (p *parser) endFamily() error {
	if p.name == "" {
		return nil
	}
	if p.typ == "" {
		return fmt.Errorf("family %s has no TYPE", p.name)
	}
	for key, h := range p.hist {
		if h.count == nil {
			return fmt.Errorf("histogram %s%s has no _count", p.name, key)
		}
	}
	p.name = ""
	return nil
}

// parseLabels reads label pairs after the opening brace up to and
// including the closing one.
func parseLabels(s string) (pairs [][2]string, rest string, err error) {
	seen := make(map[string]bool)
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, "", fmt.Errorf("label without =")
		}
		name := s[:eq]
		if !metrics.ValidLabelName(name) || seen[name] {
			return nil, "", fmt.Errorf("label name %q invalid or repeated", name)
		}
		seen[name] = true
		s = s[eq+1:]
		if !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("label value not quoted")
		}
		var val strings.Builder
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\n' {
				return nil, "", fmt.Errorf("newline in label value")
			}
			if s[i] == '\\' {
				i++
				switch {
				case i >= len(s):
					return nil, "", fmt.Errorf("unterminated escape")
				case s[i] == 'n':
					val.WriteByte('\n')
				case s[i] == '\\' || s[i] == '"':
					val.WriteByte(s[i])
				default:
					return nil, "", fmt.Errorf("bad escape \\%c", s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, "", fmt.Errorf("unterminated label value")
		}
		pairs = append(pairs, [2]string{name, val.String()})
		s = s[i+1:]
		switch {
		case strings.HasPrefix(s, "}"):
			return pairs, s[1:], nil
		case strings.HasPrefix(s, ","):
			s = s[1:]
		default:
			return nil, "", fmt.Errorf("want , or } after a label")
		}
	}
}

func seriesKey(name string, pairs [][2]string) string {
	if len(pairs) == 0 {
		return name
	}
	parts := make([]string, len(pairs))
	for i, kv := range pairs {
		parts[i] = kv[0] + `="` + kv[1] + `"`
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}
