package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Populated names what Populate stored.
type Populated struct {
	Accounts []*switchboard.Account
	Agents   []*switchboard.Agent
	Tasks    []*switchboard.Task // as stored last
}

// Populate fills an empty store with a small deployment that uses every
// column kind the schema has: an operator and an owner account (one
// disabled), agents in each mode (skills, endpoint, webhook secret), owner
// and peer tokens (one rotated, so revoked), tasks in several states with
// events, artifacts and follow-up message ids, push configurations,
// deliveries (queued, offered, closed), a session, a rate count, and the
// certificate manager's files (a private key among them) and a lock, and
// two entries of the audit log. Times
// are fixed, with nanoseconds (those the store takes from its clock
// aside: token creation, event times).
func Populate(tb testing.TB, s Store) *Populated {
	tb.Helper()
	return PopulateAt(tb, s, time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC))
}

// PopulateAt is Populate with the tasks created from at on: task-a
// (submitted) and task-b (working) are unfinished, task-c (completed) and
// task-d (failed) finished 2 and 3 minutes and a second after at.
func PopulateAt(tb testing.TB, s Store, at time.Time) *Populated {
	tb.Helper()
	ctx := context.Background()
	p := &Populated{}
	check := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	for i, a := range []*switchboard.Account{
		{ID: "acct-op", Name: "operator", Role: switchboard.RoleOperator, CreatedAt: at, UpdatedAt: at},
		{ID: "acct-alice", Name: "alice", Role: switchboard.RoleOwner, CreatedAt: at, UpdatedAt: at},
	} {
		check(s.CreateAccount(ctx, a))
		_, hash := switchboard.NewToken(switchboard.TokenOwner)
		check(s.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: a.ID}, false))
		if i == 1 {
			disabled := true
			_, err := s.UpdateAccount(ctx, a.ID, switchboard.AccountUpdate{Disabled: &disabled})
			check(err)
		}
		p.Accounts = append(p.Accounts, a)
	}
	for _, g := range []*switchboard.Agent{
		{ID: "agent-inbox", AccountID: "acct-alice", Handle: "inbox-bot", Name: "Inbox “bot”", Description: "ünïcode\nand lines",
			Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Domain: "inbox.example.com",
			Skills:         []a2a.AgentSkill{{ID: "s1", Name: "Skill", Description: "d", Tags: []string{"x", "y"}}},
			ExtendedSkills: []a2a.AgentSkill{{ID: "s2", Name: "Secret skill", Description: "e", Tags: []string{"z"}}}},
		{ID: "agent-hook", AccountID: "acct-alice", Handle: "hook-bot", Name: "Hook", Mode: switchboard.ModeWebhook,
			Version: "2.0.0", Endpoint: "https://example.com/hook", WebhookSecret: "whsec-123", AcceptsTasks: false},
		{ID: "agent-conn", AccountID: "acct-op", Handle: "conn-bot", Name: "Conn", Mode: switchboard.ModeConnector,
			Version: "0.1.0", AcceptsTasks: true},
	} {
		g.CreatedAt, g.UpdatedAt = at, at
		check(s.CreateAgent(ctx, g))
		p.Agents = append(p.Agents, g)
		_, hash := switchboard.NewToken(switchboard.TokenPeer)
		check(s.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: "bob"}, false))
		_, hash = switchboard.NewToken(switchboard.TokenPeer)
		check(s.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: "bob"}, true))
	}
	for i, state := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed} {
		g := p.Agents[i%len(p.Agents)]
		created := at.Add(time.Duration(i) * time.Minute)
		task := newTask(g, "bob", "ctx-"+string(rune('a'+i)), "msg-"+string(rune('a'+i)), created)
		task.A2A.ID = a2a.TaskID("task-" + string(rune('a'+i)))
		task.A2A.History[0].TaskID = task.A2A.ID
		change := created2(task, created)
		_, err := s.CreateTask(ctx, task, change)
		check(err)
		if state != a2a.TaskStateSubmitted {
			stored, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
				now := created.Add(time.Second)
				tk.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &now}
				art := &a2a.Artifact{ID: "art", Parts: a2a.ContentParts{a2a.NewTextPart("answer ✓")}}
				tk.A2A.Artifacts = append(tk.A2A.Artifacts, art)
				tk.UpdatedAt = now
				return &switchboard.TaskChange{MessageID: "follow-" + string(tk.ID()), Events: []a2a.Event{
					&a2a.TaskArtifactUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Artifact: art},
					&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status},
				}}, nil
			})
			check(err)
			task = stored
		}
		p.Tasks = append(p.Tasks, task)
	}
	// An offer in flight: a delivery with a holder, an offered time and an
	// attempt.
	_, err := s.ClaimDeliveries(ctx, "agent-inbox", "conn-1", 10, time.Minute)
	check(err)
	_, err = s.OpenSession(ctx, &switchboard.AgentSession{AgentID: "agent-conn", Holder: "conn-2", InstanceID: "i-1",
		ConnectedAt: at, ExpiresAt: at.Add(time.Minute)})
	check(err)
	if rc, ok := s.(interface {
		CountRequest(context.Context, string, time.Time) (int, error)
	}); ok {
		_, err := rc.CountRequest(ctx, "peer:bob", at)
		check(err)
	}
	// The certificate manager's files: a certificate, and its private key
	// (sealed at rest), and a lock (never exported).
	check(s.PutCertFile(ctx, &switchboard.CertFile{Key: "certificates/ca/a.example/a.example.crt", Value: []byte("-----BEGIN CERTIFICATE-----\n")}))
	check(s.PutCertFile(ctx, &switchboard.CertFile{Key: "certificates/ca/a.example/a.example.key", Value: []byte("-----BEGIN EC PRIVATE KEY-----\n"), Secret: true}))
	_, err = s.TryLockCert(ctx, "issue_cert_a.example", "holder", time.Minute)
	check(err)
	// The audit log: a sign-in refused and a token issued.
	check(s.CreateAuditEntry(ctx, &switchboard.AuditEntry{ID: "audit-1", At: at, ActorKind: switchboard.AuditAnonymous,
		Action: switchboard.AuditSignIn, TargetKind: "account", Outcome: switchboard.AuditDenied, ClientAddr: "192.0.2.7",
		Detail: "unknown token"}))
	check(s.CreateAuditEntry(ctx, &switchboard.AuditEntry{ID: "audit-2", At: at.Add(time.Second), AccountID: "acct-alice",
		ActorKind: switchboard.AuditOwner, ActorID: "acct-alice", Action: switchboard.AuditTokenIssue, TargetKind: "token",
		TargetID: "peer:ci", Outcome: switchboard.AuditOK, ClientAddr: "2001:db8::1"}))
	return p
}

// created2 is the change of a new task of Populate: its message id, a
// push configuration and a delivery.
func created2(task *switchboard.Task, at time.Time) *switchboard.TaskChange {
	c := created(task, &switchboard.PushConfig{
		Config: a2a.PushConfig{TaskID: task.ID(), ID: "push-1", URL: "https://example.com/push", Token: "push-token",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"}},
		Protocol: switchboard.ProtocolV03, CreatedAt: at,
	})
	c.NewDeliveries = []*switchboard.Delivery{{
		ID: "dlv-" + string(task.ID()), TaskID: task.ID(), AgentID: task.AgentID, Kind: switchboard.DeliverTask,
		MessageID: task.A2A.History[0].ID, State: switchboard.DeliveryQueued, Deadline: at.Add(time.Hour),
		NextAttemptAt: at, CreatedAt: at,
	}}
	return c
}
