package sqlstore_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// BenchmarkRoutedTaskWrites measures the two write transactions of a task
// routed to a connected agent, one after the other as a lone peer makes
// them: the task created with its delivery already offered, then the
// agent's final answer written with the delivery's acknowledgement. Besides
// time it reports the write system calls and bytes per task, from
// /proc/self/io (they include the checkpoints that copy the log into the
// database file): on a machine with costly system calls, the write calls
// are the largest part of a routed task's server CPU.
func BenchmarkRoutedTaskWrites(b *testing.B) {
	text := kibText
	ctx := context.Background()
	db := MustOpenSQLite(b)
	agent := seedAgent(b, db, switchboard.ModeConnector)
	peer := switchboard.Peer{AgentID: agent.ID, ID: switchboard.NewID(), Label: "peer"}
	route := func() {
		msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
		t, change := acceptedTask(agent, peer, msg)
		d := change.NewDeliveries[0]
		now := time.Now().UTC()
		d.State, d.Holder, d.Attempts, d.OfferedAt = switchboard.DeliveryOffered, "conn-1", 1, &now
		if _, err := db.CreateTask(ctx, t, change); err != nil {
			b.Fatal(err)
		}
		answer := a2a.NewStatusUpdateEvent(&t.A2A, a2a.TaskStateCompleted,
			&a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(text)}})
		_, _, err := db.ModifyTask(ctx, t.ID(), func(t *switchboard.Task) (*switchboard.TaskChange, error) {
			t.A2A.Status = answer.Status
			return &switchboard.TaskChange{Events: []a2a.Event{answer}, Ack: &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: "conn-1"}}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for range 5000 { // a store that has seen some traffic, not an empty one
		route()
	}
	before, ok := readProcIO()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		route()
	}
	b.StopTimer()
	if after, ok2 := readProcIO(); ok && ok2 {
		b.ReportMetric(float64(after["syscw"]-before["syscw"])/float64(b.N), "write-calls/op")
		b.ReportMetric(float64(after["wchar"]-before["wchar"])/float64(b.N), "write-B/op")
		b.ReportMetric(float64(after["syscr"]-before["syscr"])/float64(b.N), "read-calls/op")
	}
}

// readProcIO reads this process's I/O counters from /proc/self/io (Linux).
func readProcIO() (map[string]int64, bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return nil, false
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out, true
}
