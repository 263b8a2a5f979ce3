package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
)

// workerArg, as the first argument, makes this program a worker process
// that holds a share of the agents: it reads a workerJob as JSON on stdin,
// prints "connected N" as agents connect and "ready" when all are, and
// runs until its stdin closes.
const workerArg = "-agent-worker"

// workerJob is what a worker process is given.
type workerJob struct {
	URLs        []string `json:"urls"`   // agent i of the deployment connects to URLs[i % len(URLs)]
	Offset      int      `json:"offset"` // the deployment-wide number of the job's first agent
	Tokens      []string `json:"tokens"`
	Concurrency int      `json:"concurrency"`
}

// fleet is the set of connector agents the tool runs, in this process and
// in worker processes.
type fleet struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	workers []*exec.Cmd
	stdins  []io.Closer
}

// startFleet connects one connector agent per token, agent i to
// urls[i % len(urls)], at most perProc in this process and the rest in
// worker processes, and returns once every agent is connected (or fails
// when they are not within a bound that grows with their number).
func startFleet(ctx context.Context, urls []string, tokens []string, perProc, concurrency int, progress io.Writer) (*fleet, error) {
	fctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	limit := time.Duration(30+len(tokens)/200) * time.Second
	ctx, stop := context.WithTimeout(ctx, limit)
	defer stop()

	local := tokens
	if len(tokens) > perProc {
		local = tokens[:perProc]
	}
	var wait []<-chan error
	for offset := len(local); offset < len(tokens); {
		share := tokens[offset:min(offset+perProc, len(tokens))]
		ready, err := f.startWorker(workerJob{URLs: urls, Offset: offset, Tokens: share, Concurrency: concurrency})
		offset += len(share)
		if err != nil {
			f.stop()
			return nil, err
		}
		wait = append(wait, ready)
	}
	var connected atomic.Int64
	localReady := make(chan error, 1)
	go func() { localReady <- runAgents(fctx, ctx, &f.wg, urls, 0, local, concurrency, &connected) }()
	wait = append(wait, localReady)
	start := time.Now()
	for _, ch := range wait {
		select {
		case err := <-ch:
			if err != nil {
				f.stop()
				return nil, err
			}
		case <-ctx.Done():
			f.stop()
			return nil, fmt.Errorf("agents not all connected within %v (%d of %d in this process)", limit, connected.Load(), len(local))
		}
	}
	if progress != nil {
		fmt.Fprintf(progress, "%d agents connected in %.1f s (%d processes)\n", len(tokens), time.Since(start).Seconds(), len(f.workers)+1)
	}
	return f, nil
}

// runAgents starts one client per token (tokens[j] is the deployment's
// agent offset+j, and connects to urls[(offset+j) % len(urls)]), at most
// concurrency connecting at once, and returns when all have connected or
// ready ends. The clients run until run ends.
func runAgents(run, ready context.Context, wg *sync.WaitGroup, urls []string, offset int, tokens []string, concurrency int, connected *atomic.Int64) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxIdleConns: concurrency}}
	sem := make(chan struct{}, concurrency)
	all := make(chan struct{})
	var left atomic.Int64
	left.Store(int64(len(tokens)))
	if len(tokens) == 0 {
		close(all)
	}
	for j, tok := range tokens {
		select {
		case sem <- struct{}{}:
		case <-ready.Done():
			return ready.Err()
		}
		var once sync.Once
		c := &connector.Client{
			URLs:          []string{urls[(offset+j)%len(urls)]},
			Token:         tok,
			Handler:       connector.HandlerFunc(echo),
			HTTPClient:    hc,
			MaxConcurrent: 4,
			QueueSize:     16,
			OnConnect: func(string) {
				once.Do(func() {
					<-sem
					connected.Add(1)
					if left.Add(-1) == 0 {
						close(all)
					}
				})
			},
		}
		wg.Go(func() {
			if err := c.Run(run); err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintln(os.Stderr, "agent stopped:", err)
			}
		})
	}
	select {
	case <-all:
		return nil
	case <-ready.Done():
		return ready.Err()
	}
}

// echo answers each message with its own text.
func echo(ctx context.Context, w *connector.Work) { _ = w.Reply(w.Text()) }

// startWorker starts a worker process holding the agents of job and
// returns a channel that gets nil when all are connected.
func (f *fleet) startWorker(job workerJob) (<-chan error, error) {
	cmd, stdin, stdout, err := startSubprocess(nil, workerArg)
	if err != nil {
		return nil, err
	}
	f.workers = append(f.workers, cmd)
	f.stdins = append(f.stdins, stdin)
	if err := json.NewEncoder(stdin).Encode(job); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- nil
			}
		}
		ready <- errors.New("a worker process ended before its agents connected")
	}()
	return ready, nil
}

// stop disconnects every agent and ends the worker processes.
func (f *fleet) stop() {
	f.cancel()
	for _, in := range f.stdins {
		in.Close()
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
	for _, w := range f.workers {
		waited := make(chan struct{})
		go func() { _ = w.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(15 * time.Second):
			_ = w.Process.Kill()
			<-waited
		}
	}
}

// runWorker is the worker process: it connects the job's agents, says
// ready, and runs them until stdin closes.
func runWorker(stdin io.Reader, stdout io.Writer) error {
	br := bufio.NewReader(stdin)
	var job workerJob
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read the job: %w", err)
	}
	if err := json.Unmarshal(line, &job); err != nil {
		return fmt.Errorf("read the job: %w", err)
	}
	run, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the parent closes stdin (or dies): stop
		_, _ = io.Copy(io.Discard, br)
		cancel()
	}()
	var wg sync.WaitGroup
	var connected atomic.Int64
	if len(job.URLs) == 0 {
		return errors.New("the job names no server")
	}
	if err := runAgents(run, run, &wg, job.URLs, job.Offset, job.Tokens, max(job.Concurrency, 1), &connected); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "connected "+strconv.FormatInt(connected.Load(), 10))
	fmt.Fprintln(stdout, "ready")
	<-run.Done()
	wg.Wait()
	return nil
}
