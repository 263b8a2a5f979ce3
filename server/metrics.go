package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// Label values of the process-level metrics: fixed sets, so that a
// metric's series are known from the start.
var (
	liveModes      = []string{string(switchboard.ModeConnector), string(switchboard.ModeWebhook), string(switchboard.ModeFront)}
	openTaskStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired}
	finalStates    = []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}
	openDeliveries = []switchboard.DeliveryState{switchboard.DeliveryQueued, switchboard.DeliveryOffered}
)

// busPublishBuckets are the buckets of switchboard_bus_publish_seconds: a
// hint is handed to the bus in microseconds unless something is wrong.
var busPublishBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1}

// storeWriteBuckets are the buckets of switchboard_store_write_seconds: a
// write takes well under a millisecond on SQLite and a few on PostgreSQL
// when all is well, and seconds when the disk or the database struggles.
var storeWriteBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// storeStatsTTL is how long the counts read from the store for the task
// and delivery gauges are reused: however often the instance is scraped,
// the store counts at most once per interval.
const storeStatsTTL = 5 * time.Second

// processMetrics are the metrics the server wires in: those of the components
// that do not import package metrics (the task service, the store, the
// bus), and the process's own.
type processMetrics struct {
	reg *metrics.Registry

	delivery    *metrics.HistogramVec // accepted → acknowledged, by mode
	deliveryAck *metrics.HistogramVec // offered → acknowledged, by mode
	created     *metrics.Counter
	finished    *metrics.CounterVec
	byMode      map[switchboard.DeliveryMode][2]*metrics.Histogram
	byFinal     map[a2a.TaskState]*metrics.Counter

	pushes *metrics.CounterVec // push attempts by outcome
	byPush map[switchboard.PushState]*metrics.Counter

	published, publishErrors *metrics.Counter
	publishLatency           *metrics.Histogram

	storeWrite *metrics.Histogram // write transactions, as their callers wait for them
}

func newProcessMetrics(version string) *processMetrics {
	pm := &processMetrics{
		reg: metrics.NewRegistry(),
		delivery: metrics.NewHistogramVec("switchboard_delivery_seconds",
			"Time from a task or follow-up message being accepted to the agent's first acknowledgement of its delivery (a connector agent's answer to the offer; a webhook's answer), by the agent's mode. It includes waiting for the agent to connect, accept tasks or be retried.",
			metrics.LatencyBuckets, metrics.Label{Name: "mode", Values: liveModes}),
		deliveryAck: metrics.NewHistogramVec("switchboard_delivery_ack_seconds",
			"Time from the offer the agent acknowledged being made to the acknowledgement: the agent's round trip (for webhooks, the whole call), by the agent's mode.",
			metrics.LatencyBuckets, metrics.Label{Name: "mode", Values: liveModes}),
		created: metrics.NewCounter("switchboard_tasks_created_total",
			"Tasks created through this instance."),
		finished: metrics.NewCounterVec("switchboard_tasks_finished_total",
			"Tasks that this instance moved to a final state, by that state.",
			metrics.Label{Name: "state", Values: shortStates(finalStates)}),
		published: metrics.NewCounter("switchboard_bus_published_total",
			"Hints this instance published on the bus (each also reaches its own watchers)."),
		publishErrors: metrics.NewCounter("switchboard_bus_publish_errors_total",
			"Hints this instance failed to publish (the bus was closed or refused them); watchers find the change at their next poll."),
		publishLatency: metrics.NewHistogram("switchboard_bus_publish_seconds",
			"Time to hand one hint to the bus: the in-process fan-out, and for NATS the client's buffered publish (not the trip to other instances).",
			busPublishBuckets),
		pushes: metrics.NewCounterVec("switchboard_push_attempts_total",
			"Push notification attempts to peers made by this instance, by outcome: sent (2xx), retry (failed, tried again later), failed (given up).",
			metrics.Label{Name: "outcome", Values: []string{"sent", "retry", "failed"}}),
		storeWrite: metrics.NewHistogram("switchboard_store_write_seconds",
			"Time a write to the store took, as its caller waited for it: one transaction (on SQLite, the wait for its group's commit included), committed or not.",
			storeWriteBuckets),
		byPush:  make(map[switchboard.PushState]*metrics.Counter),
		byMode:  make(map[switchboard.DeliveryMode][2]*metrics.Histogram),
		byFinal: make(map[a2a.TaskState]*metrics.Counter),
	}
	for _, mode := range liveModes {
		pm.byMode[switchboard.DeliveryMode(mode)] = [2]*metrics.Histogram{pm.delivery.With(mode), pm.deliveryAck.With(mode)}
	}
	for _, s := range finalStates {
		pm.byFinal[s] = pm.finished.With(switchboard.ShortState(s))
	}
	pm.byPush[switchboard.PushSent] = pm.pushes.With("sent")
	pm.byPush[switchboard.PushQueued] = pm.pushes.With("retry")
	pm.byPush[switchboard.PushFailed] = pm.pushes.With("failed")
	pm.reg.MustRegister(pm.pushes)
	pm.reg.MustRegister(pm.delivery, pm.deliveryAck, pm.created, pm.finished, pm.published, pm.publishErrors, pm.publishLatency, pm.storeWrite,
		metrics.NewGaugeVecFunc("switchboard_build_info", "The running version; always 1.",
			func(v []float64) { v[0] = 1 }, metrics.Label{Name: "version", Values: []string{version}}))
	pm.reg.MustRegister(metrics.RuntimeMetrics()...)
	return pm
}

func shortStates(states []a2a.TaskState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = switchboard.ShortState(s)
	}
	return out
}

// onAck records the latencies of a delivery's first acknowledgement
// (relay.Service.OnAck). Cancel notices are not work and are left out.
func (pm *processMetrics) onAck(mode switchboard.DeliveryMode, d *switchboard.Delivery, at time.Time) {
	hs, ok := pm.byMode[mode]
	if !ok || d.Kind == switchboard.DeliverCancel {
		return
	}
	hs[0].ObserveDuration(max(0, at.Sub(d.CreatedAt)))
	if d.OfferedAt != nil {
		hs[1].ObserveDuration(max(0, at.Sub(*d.OfferedAt)))
	}
}

// onPushAttempt counts a push attempt by the state it left the push in
// (push.SendConfig.OnAttempt).
func (pm *processMetrics) onPushAttempt(state switchboard.PushState) {
	if c := pm.byPush[state]; c != nil {
		c.Inc()
	}
}

// onStoreWrite times a write to the store (sqlstore.DB.OnWrite).
func (pm *processMetrics) onStoreWrite(d time.Duration) { pm.storeWrite.ObserveDuration(d) }

// onTaskState counts created and finished tasks (sqlstore.DB.OnTaskState).
func (pm *processMetrics) onTaskState(from, to a2a.TaskState) {
	if from == "" {
		pm.created.Inc()
	}
	if c := pm.byFinal[to]; c != nil && !from.Terminal() {
		c.Inc()
	}
}

// registerBus registers what the bus itself counts: hints received from
// other instances and whether it is connected. A memory bus has no other
// instances and is always connected.
func (pm *processMetrics) registerBus(bus switchboard.Bus) {
	received, connected := func() float64 { return 0 }, func() float64 { return 1 }
	if nb, ok := bus.(*natsbus.Bus); ok {
		received = func() float64 { return float64(nb.Received()) }
		connected = func() float64 {
			if nb.Connected() {
				return 1
			}
			return 0
		}
	}
	pm.reg.MustRegister(
		metrics.NewCounterFunc("switchboard_bus_received_total",
			"Hints this instance received from other instances over NATS (0 on the memory bus).", received),
		metrics.NewGaugeFunc("switchboard_bus_connected",
			"1 while the bus is connected (always on the memory bus); while it is 0 the instance works on polls alone.", connected))
}

// meteredBus counts and times the hints this instance publishes.
type meteredBus struct {
	switchboard.Bus
	pm *processMetrics
}

// Notify implements switchboard.Bus.
func (b *meteredBus) Notify(ctx context.Context, subject string) error {
	start := time.Now()
	err := b.Bus.Notify(ctx, subject)
	b.pm.publishLatency.ObserveDuration(time.Since(start))
	if err != nil {
		b.pm.publishErrors.Inc()
	} else {
		b.pm.published.Inc()
	}
	return err
}

// storeGauges serves the gauges read from the store: unfinished tasks and
// open deliveries of the whole deployment, counted at most once per
// storeStatsTTL.
type storeGauges struct {
	db  *sqlstore.DB
	log *slog.Logger

	// mu is held during a count: concurrent scrapes wait for that one count
	// and share it.
	mu         sync.Mutex
	at         time.Time                         // guarded by mu: when the counts were read
	tasks      map[a2a.TaskState]int             // guarded by mu
	deliveries map[switchboard.DeliveryState]int // guarded by mu
}

// register registers the gauges switchboard_tasks and
// switchboard_deliveries.
func (g *storeGauges) register(reg *metrics.Registry) {
	reg.MustRegister(
		metrics.NewGaugeVecFunc("switchboard_tasks",
			"Unfinished tasks of the whole deployment by state, read from the store at most every 5 s (every instance reports the same numbers). Finished tasks: switchboard_tasks_finished_total.",
			func(v []float64) {
				tasks, _ := g.read()
				for i, s := range openTaskStates {
					v[i] = float64(tasks[s])
				}
			}, metrics.Label{Name: "state", Values: shortStates(openTaskStates)}),
		metrics.NewGaugeVecFunc("switchboard_deliveries",
			"Deliveries of the whole deployment waiting to be offered (queued) or acknowledged (offered), read from the store at most every 5 s.",
			func(v []float64) {
				_, deliveries := g.read()
				for i, s := range openDeliveries {
					v[i] = float64(deliveries[s])
				}
			}, metrics.Label{Name: "state", Values: []string{string(switchboard.DeliveryQueued), string(switchboard.DeliveryOffered)}}))
}

// read returns the counts, reading them again if they are older than
// storeStatsTTL. A failed count keeps the previous one (and is logged):
// /readyz reports an unreachable store.
func (g *storeGauges) read() (map[a2a.TaskState]int, map[switchboard.DeliveryState]int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.at.IsZero() && time.Since(g.at) < storeStatsTTL {
		return g.tasks, g.deliveries
	}
	g.at = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if tasks, err := g.db.CountUnfinishedTasks(ctx); err != nil {
		g.log.Warn("metrics: count tasks", "err", err)
	} else {
		g.tasks = tasks
	}
	if deliveries, err := g.db.CountOpenDeliveries(ctx); err != nil {
		g.log.Warn("metrics: count deliveries", "err", err)
	} else {
		g.deliveries = deliveries
	}
	return g.tasks, g.deliveries
}
