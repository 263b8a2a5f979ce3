package metrics

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry holds the metrics of a process and writes them, sorted by name.
// It is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	metrics []Metric // guarded by mu: sorted by name, names unique
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds metrics. It returns an error, and adds none of them, if a
// name is taken or empty (a member of a vector is not a metric of its own).
func (r *Registry) Register(ms ...Metric) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make(map[string]bool, len(r.metrics)+len(ms))
	for _, m := range r.metrics {
		names[m.Name()] = true
	}
	for _, m := range ms {
		switch name := m.Name(); {
		case name == "":
			return fmt.Errorf("metrics: register a metric without a name")
		case names[name]:
			return fmt.Errorf("metrics: %s registered twice", name)
		default:
			names[name] = true
		}
	}
	r.metrics = append(r.metrics, ms...)
	sort.Slice(r.metrics, func(i, j int) bool { return r.metrics[i].Name() < r.metrics[j].Name() })
	return nil
}

// MustRegister is Register that panics on error, for start-up code.
func (r *Registry) MustRegister(ms ...Metric) {
	if err := r.Register(ms...); err != nil {
		panic(err)
	}
}

// WriteText writes every metric in the text exposition format. Function
// metrics are called meanwhile; concurrent calls take turns.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	tw := &textWriter{w: bufio.NewWriterSize(w, 16<<10), num: make([]byte, 0, 32)}
	for _, m := range r.metrics {
		m.writeText(tw)
	}
	return tw.w.Flush()
}

// ServeHTTP answers GET and HEAD with every metric in the text exposition
// format.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-store")
	if req.Method == http.MethodHead {
		return
	}
	_ = r.WriteText(w) // the scraper went away
}
