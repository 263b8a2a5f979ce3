package dashboard

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// HealthStore counts what the operator's health page shows, across the
// whole deployment, each with one query over an index (sqlstore.DB
// implements it; /metrics reads the task and delivery counts too).
type HealthStore interface {
	// CountUnfinishedTasks counts the tasks in each unfinished state.
	CountUnfinishedTasks(ctx context.Context) (map[a2a.TaskState]int, error)
	// CountOpenDeliveries counts the queued and offered deliveries.
	CountOpenDeliveries(ctx context.Context) (map[switchboard.DeliveryState]int, error)
	// CountOpenWakes counts the pending and sending wakes.
	CountOpenWakes(ctx context.Context) (map[switchboard.WakeState]int, error)
	// CountOpenPushes counts the queued and sending push notifications.
	CountOpenPushes(ctx context.Context) (map[switchboard.PushState]int, error)
	// CountLiveSessions counts, per instance id, the agents connected to
	// it at now.
	CountLiveSessions(ctx context.Context, now time.Time) (map[string]int, error)
}

// healthBody is the health page: for every owner, the public addresses;
// for the operator, the deployment's instances, agents and queues too.
type healthBody struct {
	Public   *publicBody
	Operator bool
	// This is this instance's id; Instances those holding live agents.
	This      string
	Instances []instanceRow
	// Agents counts every agent; Connected the connector agents connected
	// to any instance.
	Agents, Connected int
	Tasks             []countRow
	Deliveries        []countRow
	Wakes             []countRow
	Pushes            []countRow
	At                string
}

// instanceRow is an instance and the agents connected to it.
type instanceRow struct {
	ID     string
	Agents int
	This   bool
}

// countRow is one count of a queue.
type countRow struct {
	Name  string
	Count int
}

// handleHealth shows how the world reaches the deployment's names and the
// viewer's agents' domains (every agent's, to the operator); to the
// operator, the deployment's instances, connected agents and queue
// depths too, read from the store now.
func (c *Console) handleHealth(w http.ResponseWriter, r *http.Request, v *viewer) {
	op := v.account.IsOperator()
	body := &healthBody{}
	if op {
		var err error
		if body, err = c.readHealth(r.Context()); err != nil {
			c.internalError(w, r, "read the deployment's health", err)
			return
		}
	}
	body.Operator = op
	public, err := c.readPublic(r, v)
	if err != nil {
		c.internalError(w, r, "read the public addresses", err)
		return
	}
	body.Public = public
	c.render(w, http.StatusOK, "health", page{Title: "Health", CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: op, Body: body})
}

// readHealth reads every count of the health page.
func (c *Console) readHealth(ctx context.Context) (*healthBody, error) {
	now := c.cfg.Now()
	body := &healthBody{This: c.Tasks.InstanceID, At: formatTime(now)}
	sessions, err := c.Health.CountLiveSessions(ctx, now)
	if err != nil {
		return nil, err
	}
	for id, n := range sessions {
		body.Instances = append(body.Instances, instanceRow{ID: id, Agents: n, This: id == body.This})
		body.Connected += n
	}
	slices.SortFunc(body.Instances, func(a, b instanceRow) int { return b.Agents - a.Agents })
	glances, err := c.Glances.FindAgentGlances(ctx, "")
	if err != nil {
		return nil, err
	}
	body.Agents = len(glances)
	tasks, err := c.Health.CountUnfinishedTasks(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired} {
		body.Tasks = append(body.Tasks, countRow{Name: switchboard.ShortState(s), Count: tasks[s]})
	}
	deliveries, err := c.Health.CountOpenDeliveries(ctx)
	if err != nil {
		return nil, err
	}
	body.Deliveries = []countRow{{"queued", deliveries[switchboard.DeliveryQueued]}, {"offered", deliveries[switchboard.DeliveryOffered]}}
	wakes, err := c.Health.CountOpenWakes(ctx)
	if err != nil {
		return nil, err
	}
	body.Wakes = []countRow{{"pending", wakes[switchboard.WakePending]}, {"sending", wakes[switchboard.WakeSending]}}
	pushes, err := c.Health.CountOpenPushes(ctx)
	if err != nil {
		return nil, err
	}
	body.Pushes = []countRow{{"queued", pushes[switchboard.PushQueued]}, {"sending", pushes[switchboard.PushSending]}}
	return body, nil
}
