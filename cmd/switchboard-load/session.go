package main

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
)

// The session scenario: -agents/2 pairs of connector agents, each pair in
// one live session, the first of each pair sending frames of -payload
// bytes to the second (one way), as fast as the window lets it or at
// -rate frames a second in all (open loop: a frame's latency counts from
// its scheduled time). A frame carries the time it was due; the receiver
// takes the latency when its Receive returns it. With -instances 2 (on
// -database), the senders are connected to the first instance and the
// receivers to the second: every frame crosses NATS.

// sessionPair is one sender and one receiver.
type sessionPair struct {
	send, recv *connector.Client
	session    *connector.Session // the sender's end
}

// runSessions runs the session scenario on dep.
func runSessions(ctx context.Context, cfg *config, dep *deployment, res *result, logs io.Writer) error {
	pairs := max(1, cfg.agents/2)
	prefix := "load-" + randomWord()
	fmt.Fprintf(logs, "creating %d connector agents (%d pairs) on %s\n", 2*pairs, pairs, dep.peerURL)
	agents, err := dep.owner.createAgents(ctx, prefix, "connector", 2*pairs, false, logs)
	if err != nil {
		return fmt.Errorf("create agents: %w", err)
	}
	if len(dep.procs) == 0 {
		defer dep.owner.deleteAgents(context.Background(), agents)
	}
	community := prefix // one community holds them all: the sessions' rule
	for _, g := range agents {
		if err := dep.owner.call(ctx, "PUT", "/agents/"+g.Handle+"/communities/"+community, nil, &struct{}{}); err != nil {
			return fmt.Errorf("put the agents in a community: %w", err)
		}
	}
	sendURL, recvURL := dep.agentURLs[0], dep.agentURLs[len(dep.agentURLs)-1]
	fmt.Fprintf(logs, "session: senders on %s, receivers on %s\n", sendURL, recvURL)

	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	m := newSessionMeter()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	start := func(url, token string, h connector.SessionHandler) (*connector.Client, <-chan struct{}) {
		hello := make(chan struct{})
		var once sync.Once
		c := &connector.Client{URLs: []string{url}, Token: token, HTTPClient: hc, Sessions: h,
			OnConnect: func(string) { once.Do(func() { close(hello) }) }}
		wg.Go(func() { _ = c.Run(runCtx) })
		return c, hello
	}
	ps := make([]*sessionPair, pairs)
	var hellos []<-chan struct{}
	for i := range ps {
		recv, h1 := start(recvURL, agents[2*i+1].AgentToken, connector.SessionHandlerFunc(m.receive))
		send, h2 := start(sendURL, agents[2*i].AgentToken, nil)
		ps[i] = &sessionPair{send: send, recv: recv}
		hellos = append(hellos, h1, h2)
	}
	connectBy := time.After(time.Duration(30+pairs/100) * time.Second)
	for _, h := range hellos {
		select {
		case <-h:
		case <-connectBy:
			return errors.New("the agents did not all connect in time")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i, p := range ps {
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		p.session, err = p.send.OpenSession(octx, agents[2*i+1].Handle, nil)
		cancel()
		if err != nil {
			return fmt.Errorf("open session %d: %w", i, err)
		}
	}
	fmt.Fprintf(logs, "%d sessions open; sending %d-byte frames", pairs, cfg.payload)
	if cfg.rate > 0 {
		fmt.Fprintf(logs, " at %.0f frames/s", cfg.rate)
	}
	fmt.Fprintln(logs)
	pr := m.drive(ctx, cfg, ps, dep.cpuSeconds)
	res.Peers = pairs
	res.setMain(pr)
	res.Frames, res.FramesPerS = pr.tasks, pr.tasksPerSecond()
	res.Tasks, res.TasksPerS = 0, 0
	res.ServerRSS = dep.rss()
	return ctx.Err()
}

// sessionMeter measures the frames the receivers take in.
type sessionMeter struct {
	measureFrom, end atomic.Int64 // unix nanos: the measured window, set before sending starts

	mu        sync.Mutex
	latencies []time.Duration // guarded by mu: of the frames due in the window
	received  atomic.Int64    // frames due in the window that arrived
	lastAt    atomic.Int64    // unix nanos: when the last of them arrived
	receivers sync.WaitGroup  // the receivers' handlers, which add their latencies as they end
}

func newSessionMeter() *sessionMeter {
	m := &sessionMeter{}
	m.measureFrom.Store(1<<63 - 1)
	return m
}

// receive accepts a session and takes its frames in, until it ends.
func (m *sessionMeter) receive(ctx context.Context, r *connector.SessionRequest) {
	s, err := r.Accept()
	if err != nil {
		return
	}
	m.receivers.Add(1)
	defer m.receivers.Done()
	var mine []time.Duration
	defer func() {
		m.mu.Lock()
		m.latencies = append(m.latencies, mine...)
		m.mu.Unlock()
	}()
	for {
		f, err := s.Receive(ctx)
		if err != nil {
			return
		}
		now := time.Now()
		if len(f.Text) < 16 {
			continue
		}
		var ts [8]byte
		if _, err := hex.Decode(ts[:], []byte(f.Text[:16])); err != nil {
			continue
		}
		due := int64(binary.BigEndian.Uint64(ts[:]))
		if due >= m.measureFrom.Load() && due < m.end.Load() && len(mine) < maxTasks {
			mine = append(mine, now.Sub(time.Unix(0, due)))
			m.received.Add(1)
			m.lastAt.Store(now.UnixNano())
		}
	}
}

// drive sends frames for -warmup and -duration, then closes the sessions
// and returns what the receivers measured.
func (m *sessionMeter) drive(ctx context.Context, cfg *config, ps []*sessionPair, serverCPU func() float64) *phaseResult {
	start := time.Now()
	measureFrom := start.Add(cfg.warmup)
	end := measureFrom.Add(cfg.duration)
	m.measureFrom.Store(measureFrom.UnixNano())
	m.end.Store(end.UnixNano())
	cpu := measureCPU(measureFrom, end, serverCPU)
	var interval time.Duration // between two frames of one sender
	if cfg.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(len(ps)) / cfg.rate)
	}
	var (
		errs     atomic.Int64
		errOnce  sync.Once
		firstErr string
		counted  atomic.Int64
		wg       sync.WaitGroup
	)
	pad := make([]byte, max(0, cfg.payload-16))
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	for i, p := range ps {
		wg.Go(func() {
			text := make([]byte, 16+len(pad))
			copy(text[16:], pad)
			// One context and one timer for all of this sender's frames: the
			// tool's own garbage is collected in the process whose receivers
			// time the frames.
			sctx, cancel := context.WithDeadline(ctx, end.Add(time.Minute))
			defer cancel()
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			// Each sender starts at its own offset within the interval, so
			// that the frames of all spread evenly.
			offset := time.Duration(0)
			if interval > 0 {
				offset = interval * time.Duration(i) / time.Duration(len(ps))
			}
			for n := int64(0); ; n++ {
				due := time.Now()
				if interval > 0 {
					due = start.Add(offset + time.Duration(n)*interval)
					if wait := time.Until(due); wait > 0 {
						timer.Reset(wait)
						select {
						case <-timer.C:
						case <-ctx.Done():
							return
						}
					}
				}
				if ctx.Err() != nil || !due.Before(end) || time.Now().After(end) {
					return // a frame not sent by the end does not count
				}
				if !due.Before(measureFrom) && cfg.count > 0 && counted.Add(1) > int64(cfg.count) {
					return
				}
				var ts [8]byte
				binary.BigEndian.PutUint64(ts[:], uint64(due.UnixNano()))
				hex.Encode(text[:16], ts[:])
				if err := p.session.Send(sctx, string(text)); err != nil {
					errs.Add(1)
					errOnce.Do(func() { firstErr = err.Error() })
					return
				}
			}
		})
	}
	wg.Wait()
	// Let the frames in flight land, then stop.
	settle := time.Now().Add(5 * time.Second)
	for last := int64(-1); time.Now().Before(settle); {
		n := m.received.Load()
		if n == last {
			break
		}
		last = n
		time.Sleep(200 * time.Millisecond)
	}
	serverCores, toolCores := cpu()
	for _, p := range ps {
		_ = p.session.Close()
	}
	waited := make(chan struct{})
	go func() { m.receivers.Wait(); close(waited) }()
	select {
	case <-waited: // every receiver added its latencies
	case <-time.After(10 * time.Second):
	}
	elapsed := cfg.duration
	if last := time.Unix(0, m.lastAt.Load()); cfg.count > 0 && last.After(measureFrom) && last.Before(end) {
		elapsed = last.Sub(measureFrom) // -count ended the phase early
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	slices.Sort(m.latencies)
	return &phaseResult{name: "session", tasks: m.received.Load(), errors: errs.Load(), firstErr: firstErr,
		elapsed: elapsed, latencies: m.latencies, serverCores: serverCores, toolCores: toolCores}
}
