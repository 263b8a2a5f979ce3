package metrics_test

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/promtest"
	"github.com/switchboard-dev/switchboard/metrics"
)

func TestWriteText(t *testing.T) {
	reg := metrics.NewRegistry()
	c := metrics.NewCounter("test_events_total", "Events.\nSecond line with a \\ backslash.")
	c.Add(3)
	vec := metrics.NewCounterVec("test_requests_total", "Requests.",
		metrics.Label{Name: "method", Values: []string{"GET", "POST"}},
		metrics.Label{Name: "code", Values: []string{"2xx", `we"ird\` + "\n"}})
	vec.With("POST", "2xx").Inc()
	vec.With("GET", `we"ird\`+"\n").Add(2)
	g := metrics.NewGauge("test_level", "A level.")
	g.Set(1.5)
	g.Dec()
	gf := metrics.NewGaugeFunc("test_read", "Read at scrape.", func() float64 { return math.Inf(1) })
	cf := metrics.NewCounterFunc("test_seen_total", "Counted elsewhere.", func() float64 { return 7 })
	gv := metrics.NewGaugeVecFunc("test_rows", "Rows by state.", func(v []float64) { v[0], v[1] = 4, 5 },
		metrics.Label{Name: "state", Values: []string{"a", "b"}})
	h := metrics.NewHistogram("test_latency_seconds", "Latency.", []float64{0.01, 0.1, 1})
	for _, v := range []float64{0.005, 0.01, 0.05, 2} {
		h.Observe(v)
	}
	hv := metrics.NewHistogramVec("test_by_mode_seconds", "Latency by mode.", []float64{0.5},
		metrics.Label{Name: "mode", Values: []string{"x", "y"}})
	hv.With("y").ObserveDuration(250 * time.Millisecond)
	reg.MustRegister(c, vec, g, gf, cf, gv, h, hv)

	var buf bytes.Buffer
	if err := reg.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `# HELP test_by_mode_seconds Latency by mode.
# TYPE test_by_mode_seconds histogram
test_by_mode_seconds_bucket{mode="x",le="0.5"} 0
test_by_mode_seconds_bucket{mode="x",le="+Inf"} 0
test_by_mode_seconds_sum{mode="x"} 0
test_by_mode_seconds_count{mode="x"} 0
test_by_mode_seconds_bucket{mode="y",le="0.5"} 1
test_by_mode_seconds_bucket{mode="y",le="+Inf"} 1
test_by_mode_seconds_sum{mode="y"} 0.25
test_by_mode_seconds_count{mode="y"} 1
# HELP test_events_total Events.\nSecond line with a \\ backslash.
# TYPE test_events_total counter
test_events_total 3
# HELP test_latency_seconds Latency.
# TYPE test_latency_seconds histogram
test_latency_seconds_bucket{le="0.01"} 2
test_latency_seconds_bucket{le="0.1"} 3
test_latency_seconds_bucket{le="1"} 3
test_latency_seconds_bucket{le="+Inf"} 4
test_latency_seconds_sum 2.065
test_latency_seconds_count 4
# HELP test_level A level.
# TYPE test_level gauge
test_level 0.5
# HELP test_read Read at scrape.
# TYPE test_read gauge
test_read +Inf
# HELP test_requests_total Requests.
# TYPE test_requests_total counter
test_requests_total{method="GET",code="2xx"} 0
test_requests_total{method="GET",code="we\"ird\\\n"} 2
test_requests_total{method="POST",code="2xx"} 1
test_requests_total{method="POST",code="we\"ird\\\n"} 0
# HELP test_rows Rows by state.
# TYPE test_rows gauge
test_rows{state="a"} 4
test_rows{state="b"} 5
# HELP test_seen_total Counted elsewhere.
# TYPE test_seen_total counter
test_seen_total 7
`
	if got := buf.String(); got != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", got, want)
	}
	samples, err := promtest.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := samples[`test_requests_total{method="GET",code="we"ird\`+"\n"+`"}`], 2.0; got != want {
		t.Fatalf("escaped label value: got %v, want %v", got, want)
	}
	if got, want := h.Count(), uint64(4); got != want {
		t.Fatalf("count: got %d, want %d", got, want)
	}
}

func TestRegister(t *testing.T) {
	reg := metrics.NewRegistry()
	a := metrics.NewCounter("a_total", "A.")
	reg.MustRegister(a)
	if err := reg.Register(metrics.NewGauge("b", "B."), metrics.NewCounter("a_total", "Again.")); err == nil {
		t.Fatal("a name registered twice")
	}
	vec := metrics.NewCounterVec("v_total", "V.", metrics.Label{Name: "x", Values: []string{"1"}})
	if err := reg.Register(vec.With("1")); err == nil {
		t.Fatal("a member of a vector registered on its own")
	}
	var buf bytes.Buffer
	if err := reg.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "# HELP b ") {
		t.Fatal("a failed Register added some of its metrics")
	}
}

func TestInvalidFamiliesPanic(t *testing.T) {
	cases := map[string]func(){
		"MetricName":    func() { metrics.NewCounter("1bad", "x") },
		"EmptyName":     func() { metrics.NewGauge("", "x") },
		"LabelName":     func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a-b", Values: []string{"1"}}) },
		"ReservedLabel": func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "__x", Values: []string{"1"}}) },
		"RepeatedLabel": func() {
			metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a", Values: []string{"1"}}, metrics.Label{Name: "a", Values: []string{"2"}})
		},
		"NoValues":      func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a"}) },
		"RepeatedValue": func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a", Values: []string{"1", "1"}}) },
		"UnknownValue":  func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a", Values: []string{"1"}}).With("2") },
		"ValueCount":    func() { metrics.NewCounterVec("ok", "x", metrics.Label{Name: "a", Values: []string{"1"}}).With() },
		"LELabel": func() {
			metrics.NewHistogramVec("ok", "x", []float64{1}, metrics.Label{Name: "le", Values: []string{"1"}})
		},
		"BucketsOrder":   func() { metrics.NewHistogram("ok", "x", []float64{1, 1}) },
		"BucketInfinite": func() { metrics.NewHistogram("ok", "x", []float64{math.Inf(1)}) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestHistogramBucketEdges(t *testing.T) {
	h := metrics.NewHistogram("edges_seconds", "x", []float64{1, 2})
	for _, v := range []float64{-1, 1, 1.0000001, 2, 3, math.Inf(1)} {
		h.Observe(v)
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(h)
	var buf bytes.Buffer
	must(t, reg.WriteText(&buf))
	s, err := promtest.Parse(&buf)
	must(t, err)
	// Buckets are "less than or equal": 1 falls in le="1".
	for key, want := range map[string]float64{
		`edges_seconds_bucket{le="1"}`:    2,
		`edges_seconds_bucket{le="2"}`:    4,
		`edges_seconds_bucket{le="+Inf"}`: 6,
		`edges_seconds_count`:             6,
	} {
		if got := s[key]; got != want {
			t.Errorf("%s: got %v, want %v", key, got, want)
		}
	}
}

// TestConcurrent records from many goroutines while scraping; with -race
// it checks that recording and writing share nothing unsafely.
func TestConcurrent(t *testing.T) {
	c := metrics.NewCounter("c_total", "x")
	g := metrics.NewGauge("g", "x")
	h := metrics.NewHistogram("h_seconds", "x", metrics.LatencyBuckets)
	reg := metrics.NewRegistry()
	reg.MustRegister(c, g, h)
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range each {
				c.Inc()
				g.Add(1)
				h.Observe(float64(i) / 1000)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			var buf bytes.Buffer
			if err := reg.WriteText(&buf); err != nil {
				t.Error(err)
				return
			}
			if _, err := promtest.Parse(&buf); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if got, want := c.Value(), uint64(workers*each); got != want {
		t.Errorf("counter: got %d, want %d", got, want)
	}
	if got, want := g.Value(), float64(workers*each); got != want {
		t.Errorf("gauge: got %v, want %v", got, want)
	}
	if got, want := h.Count(), uint64(workers*each); got != want {
		t.Errorf("histogram count: got %d, want %d", got, want)
	}
	if got, want := h.Sum(), float64(workers)*(each-1)*each/2/1000; math.Abs(got-want) > 1e-6 {
		t.Errorf("histogram sum: got %v, want %v", got, want)
	}
}

func TestRecordingDoesNotAllocate(t *testing.T) {
	c := metrics.NewCounterVec("c_total", "x", metrics.Label{Name: "a", Values: []string{"1", "2"}}).With("2")
	h := metrics.NewHistogramVec("h_seconds", "x", metrics.LatencyBuckets, metrics.Label{Name: "a", Values: []string{"1"}}).With("1")
	g := metrics.NewGauge("g", "x")
	if n := testing.AllocsPerRun(1000, func() {
		c.Inc()
		g.Add(1)
		h.Observe(0.003)
		h.ObserveDuration(time.Millisecond)
	}); n != 0 {
		t.Fatalf("%v allocations per recording", n)
	}
}

func TestServeHTTP(t *testing.T) {
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewCounter("served_total", "x"))
	reg.MustRegister(metrics.RuntimeMetrics()...)
	srv := httptest.NewServer(reg)
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := resp.Header.Get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8"; got != want {
		t.Fatalf("content type: got %q, want %q", got, want)
	}
	s, err := promtest.Parse(bytes.NewReader(body))
	must(t, err)
	if s["go_goroutines"] < 1 || s["go_memstats_heap_alloc_bytes"] <= 0 || s["process_start_time_seconds"] < 1e9 {
		t.Fatalf("runtime metrics: %v", s)
	}

	resp, err = http.Post(srv.URL, "text/plain", nil)
	must(t, err)
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusMethodNotAllowed; got != want {
		t.Fatalf("POST: got %d, want %d", got, want)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGaugeSetFunc: the series a GaugeSetFunc reads at scrape time are
// written sorted by label value, escaped, once each; with none, only the
// family's header.
func TestGaugeSetFunc(t *testing.T) {
	var samples []metrics.Sample
	g := metrics.NewGaugeSetFunc("test_expiry_seconds", "Seconds left.", "name", func() []metrics.Sample { return samples })
	reg := metrics.NewRegistry()
	reg.MustRegister(g)
	scrape := func() string {
		var buf bytes.Buffer
		if err := reg.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	header := "# HELP test_expiry_seconds Seconds left.\n# TYPE test_expiry_seconds gauge\n"
	if got := scrape(); got != header {
		t.Fatalf("without samples:\n%s", got)
	}
	samples = []metrics.Sample{{"b.example", 20}, {`we"ird`, -1}, {"a.example", 10.5}, {"b.example", 99}}
	want := header + "test_expiry_seconds{name=\"a.example\"} 10.5\ntest_expiry_seconds{name=\"b.example\"} 20\ntest_expiry_seconds{name=\"we\\\"ird\"} -1\n"
	if got := scrape(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := promtest.Parse(strings.NewReader(scrape())); err != nil {
		t.Fatal(err)
	}
}
