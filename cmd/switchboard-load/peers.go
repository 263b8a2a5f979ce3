package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// target is an A2A JSON-RPC endpoint a peer sends to.
type target struct {
	url   string
	token string // peer token; empty: no Authorization header
	group int    // which of the phase's groups its calls count in
	skill string // when set, the message's metadata asks for this skill (a community's address routes by it)
	// binding is "" (JSON-RPC at url), "rest" (HTTP+JSON under url) or
	// "grpc" (the driver's gRPC connections, the agent named by tenant).
	binding, tenant string
}

// phase describes one measured run of the peers.
type phase struct {
	name      string
	groups    []string // names of the targets' groups when they are several (measured apart, interleaved)
	targets   []target
	wantState string // the state a task must be in when the call returns (blocking) or when it is done
	blocking  bool   // false: returnImmediately, then GetTask until wantState
	// serverCPU returns the CPU seconds the servers measured have used so
	// far; nil when the phase has none of its own to measure.
	serverCPU func() float64
}

// phaseResult is what one phase measured.
type phaseResult struct {
	name      string
	tasks     int64
	errors    int64
	firstErr  string
	elapsed   time.Duration
	latencies []time.Duration // sorted
	// serverCores and toolCores are the CPU the servers (phase.serverCPU)
	// and this process (peers, in-process agents, the direct server) used
	// while the phase was measured, in cores.
	serverCores, toolCores float64
}

// tasksPerSecond is the phase's throughput.
func (r *phaseResult) tasksPerSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.tasks) / r.elapsed.Seconds()
}

// percentile returns the p-th percentile latency in milliseconds (nearest
// rank), or 0 with no samples.
func (r *phaseResult) percentile(p float64) float64 {
	n := len(r.latencies)
	if n == 0 {
		return 0
	}
	i := int(float64(n)*p/100+0.5) - 1
	i = max(0, min(n-1, i))
	return float64(r.latencies[i]) / float64(time.Millisecond)
}

// driver sends the peers' messages.
type driver struct {
	cfg     *config
	http    *http.Client
	payload []byte    // the message text, JSON-escaped (it is plain ASCII)
	run     string    // makes message ids unique across runs
	grpc    *grpcPool // -binding grpc: the peers' connections
}

// newDriver prepares the HTTP client and the payload.
func newDriver(cfg *config) *driver {
	tr := &http.Transport{
		MaxIdleConns:        cfg.peers * 2,
		MaxIdleConnsPerHost: cfg.peers * 2,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	text := make([]byte, cfg.payload)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	for i := range text {
		text[i] = alphabet[i%len(alphabet)]
	}
	return &driver{cfg: cfg, http: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, payload: text,
		run: strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// setTLS sets the peers' TLS configuration for dep: the certificate of
// the server started with -tls, or -tls-root / -tls-insecure against
// -server. HTTP/2 stays off: the peers keep one HTTP/1.1 connection each
// over TLS, as they do over plain HTTP, so that a comparison of the two
// measures TLS alone.
func (d *driver) setTLS(cfg *config, dep *deployment) error {
	tr := d.http.Transport.(*http.Transport)
	if dep.tls != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: dep.tls.roots}
		return nil
	}
	c, err := peersTLS(cfg)
	if err != nil {
		return err
	}
	tr.TLSClientConfig = c
	return nil
}

// drive runs one phase: -warmup of sending that is not counted, then up to
// -duration (and -count tasks) that is.
func (d *driver) drive(ctx context.Context, p phase) *phaseResult {
	return d.driveGroups(ctx, p)[0]
}

// driveGroups runs one phase and returns one result per group of targets
// (one when p.groups is empty). The groups' calls interleave, so that each
// group is measured under the same load at the same time.
func (d *driver) driveGroups(ctx context.Context, p phase) []*phaseResult {
	groups := max(len(p.groups), 1)
	cfg := d.cfg
	start := time.Now()
	measureFrom := start.Add(cfg.warmup)
	end := measureFrom.Add(cfg.duration)
	ctx, cancel := context.WithDeadline(ctx, end.Add(2*time.Minute)) // calls in flight at the end may finish
	defer cancel()
	var (
		seq      atomic.Int64 // tickets handed out
		counted  atomic.Int64 // measured tasks started
		errOnce  sync.Once
		firstErr string
		mu       sync.Mutex
		all      = make([][]time.Duration, groups)
		errsBy   = make([]atomic.Int64, groups)
		lastDone atomic.Int64 // unix nanos of the last measured call's end
	)
	var interval time.Duration
	if cfg.rate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.rate)
	}
	cpu := measureCPU(measureFrom, end, p.serverCPU)
	var wg sync.WaitGroup
	for peer := range cfg.peers {
		wg.Go(func() {
			mine := make([][]time.Duration, groups)
			buf := new(bytes.Buffer)
			for {
				i := seq.Add(1) - 1
				at := time.Now()
				if interval > 0 {
					at = start.Add(time.Duration(i) * interval)
					if at.After(end) {
						break
					}
					if wait := time.Until(at); wait > 0 {
						select {
						case <-time.After(wait):
						case <-ctx.Done():
						}
					}
				}
				if ctx.Err() != nil || time.Now().After(end) {
					break
				}
				measured := !at.Before(measureFrom)
				if measured && cfg.count > 0 && counted.Add(1) > int64(cfg.count) {
					break
				}
				t := p.targets[int(i)%len(p.targets)]
				err := d.send(ctx, buf, t, p, strconv.Itoa(peer)+"-"+strconv.FormatInt(i, 10))
				done := time.Now()
				if !measured {
					continue
				}
				if err != nil {
					errsBy[t.group].Add(1)
					errOnce.Do(func() { firstErr = err.Error() })
					continue
				}
				mine[t.group] = append(mine[t.group], done.Sub(at))
				lastDone.Store(done.UnixNano())
			}
			mu.Lock()
			for g := range all {
				all[g] = append(all[g], mine[g]...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	serverCores, toolCores := cpu()
	elapsed := cfg.duration
	if last := time.Unix(0, lastDone.Load()); cfg.count > 0 && last.After(measureFrom) && last.Before(end) {
		elapsed = last.Sub(measureFrom) // -count ended the phase early
	}
	out := make([]*phaseResult, groups)
	for g := range out {
		slices.Sort(all[g])
		out[g] = &phaseResult{name: p.name, tasks: int64(len(all[g])), errors: errsBy[g].Load(), elapsed: elapsed, latencies: all[g],
			serverCores: serverCores, toolCores: toolCores}
		if len(p.groups) > 0 {
			out[g].name = p.groups[g]
		}
		if out[g].errors > 0 {
			out[g].firstErr = firstErr
		}
	}
	return out
}

// measureCPU samples the CPU of the servers (serverCPU, when not nil) and
// of this process at from and at end, and returns a function that reports
// the cores each used between the two samples. Called before end, that
// function takes the second sample at once (the phase ended early); called
// before from, it reports nothing.
func measureCPU(from, end time.Time, serverCPU func() float64) func() (server, tool float64) {
	type sample struct {
		at           time.Time
		server, tool float64
	}
	take := func() sample {
		s := sample{at: time.Now(), tool: processCPU(os.Getpid())}
		if serverCPU != nil {
			s.server = serverCPU()
		}
		return s
	}
	var (
		first, last *sample // written by the sampler only, read once it is done
		stop        = make(chan struct{})
		done        = make(chan struct{})
	)
	go func() {
		defer close(done)
		for _, at := range []time.Time{from, end} {
			select {
			case <-time.After(time.Until(at)):
			case <-stop:
				return
			}
			s := take()
			if first == nil {
				first = &s
			} else {
				last = &s
			}
		}
	}()
	return func() (server, tool float64) {
		close(stop)
		<-done
		if first == nil {
			return 0, 0
		}
		if last == nil {
			s := take()
			last = &s
		}
		secs := last.at.Sub(first.at).Seconds()
		if secs <= 0 {
			return 0, 0
		}
		return (last.server - first.server) / secs, (last.tool - first.tool) / secs
	}
}

// rpcAnswer is the part of a JSON-RPC answer the driver reads.
type rpcAnswer struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *answerResult `json:"result"`
}

// answerResult is SendMessage's result ({"task":…}) or GetTask's (the task).
type answerResult struct {
	Task *taskState `json:"task"`
	taskState
}

// taskState is the part of a task the driver reads.
type taskState struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// send sends one message as p says and returns when the task is in
// p.wantState (or an error).
func (d *driver) send(ctx context.Context, buf *bytes.Buffer, t target, p phase, msgID string) error {
	buf.Reset()
	buf.WriteString(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`)
	buf.WriteString(d.run)
	buf.WriteByte('-')
	buf.WriteString(msgID)
	buf.WriteString(`","role":"ROLE_USER","parts":[{"text":"`)
	buf.Write(d.payload)
	buf.WriteString(`"}]`)
	if t.skill != "" {
		buf.WriteString(`,"metadata":{"skill":`)
		buf.WriteString(strconv.Quote(t.skill))
		buf.WriteString(`}`)
	}
	buf.WriteString(`},"configuration":{"returnImmediately":`)
	buf.WriteString(strconv.FormatBool(!p.blocking))
	buf.WriteString(`}}}`)
	var task *taskState
	var err error
	switch t.binding {
	case "rest":
		task, err = d.sendREST(ctx, t, restBody(buf.Bytes()))
	case "grpc":
		task, err = d.sendGRPC(ctx, t, d.run+"-"+msgID, !p.blocking)
	default:
		task, err = d.call(ctx, t, buf.Bytes())
	}
	if err != nil {
		return err
	}
	if p.blocking || task.Status.State == p.wantState {
		if task.Status.State != p.wantState {
			return fmt.Errorf("task %s is %s, want %s", task.ID, task.Status.State, p.wantState)
		}
		return nil
	}
	// Non-blocking: poll until the task is done, 1 ms apart at first.
	body := []byte(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":` + strconv.Quote(task.ID) + `}}`)
	wait := time.Millisecond
	for range 2000 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(wait*2, 16*time.Millisecond)
		var got *taskState
		var err error
		switch t.binding {
		case "rest":
			got, err = d.restCall(ctx, t, "GET", t.url+"/tasks/"+url.PathEscape(task.ID), nil)
		case "grpc":
			got, err = d.getGRPC(ctx, t, task.ID)
		default:
			got, err = d.call(ctx, t, body)
		}
		if err != nil {
			return err
		}
		if got.Status.State == p.wantState {
			return nil
		}
	}
	return fmt.Errorf("task %s did not reach %s", task.ID, p.wantState)
}

// do sends req and returns the body of its 200 answer (at most 8 MiB);
// any other status is an error that quotes the body's start.
func (d *driver) do(req *http.Request) ([]byte, error) {
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, data)
	}
	return data, nil
}

// call posts one JSON-RPC request and returns the task in its answer.
func (d *driver) call(ctx context.Context, t target, body []byte) (*taskState, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", t.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	data, err := d.do(req)
	if err != nil {
		return nil, err
	}
	var a rpcAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	if a.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", a.Error.Code, a.Error.Message)
	}
	switch {
	case a.Result == nil:
		return nil, fmt.Errorf("the answer holds no result: %.200s", data)
	case a.Result.Task != nil:
		return a.Result.Task, nil
	case a.Result.ID != "":
		return &a.Result.taskState, nil
	}
	return nil, fmt.Errorf("the answer holds no task: %.200s", data)
}
