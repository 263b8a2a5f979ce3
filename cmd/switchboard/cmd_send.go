package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/front"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// Defaults of send --wait.
const (
	defaultWaitTimeout = 2 * time.Minute
	maxWaitTimeout     = 30 * time.Minute
	waitPollMax        = 5 * time.Second
)

// SendCmd sends a message from one of our agents to any A2A agent (with
// --agent and the owner token), or as an agent on the network of its
// server (with its agent token; cmd_network.go).
type SendCmd struct {
	Target       string        `arg:"" optional:"" help:"The agent to send to: a URL, an alias (switchboard peers add) or the handle of an agent on this server. On the network (no --agent): the handle of an agent that shares a community with yours; without it, discovery chooses (--community, --skill)."`
	Agent        string        `name:"agent" help:"Your agent that sends (handle or id), with the owner token; the exchange is recorded in its outbox. Without --agent, the message goes on the network of the server as the agent whose agent token (sba_…) --token, --token-env, --token-stdin or $SWITCHBOARD_AGENT_TOKEN gives."`
	Community    string        `name:"community" help:"On the network: choose (or, with a handle, require) an agent in this community of yours; default: any of your agent's communities."`
	Skill        string        `name:"skill" help:"On the network: choose an agent offering this skill (a card skill's id or tag)."`
	Text         string        `name:"text" required:"" help:"The message ('-' reads it from stdin)."`
	Context      string        `name:"context" help:"contextId: continue this conversation."`
	Task         string        `name:"task" help:"taskId: continue this task of the target (for instance one waiting for input)."`
	Wait         bool          `name:"wait" help:"Wait until the task is finished or needs input (at most --timeout); otherwise return at once."`
	Timeout      time.Duration `name:"timeout" default:"2m" help:"How long --wait waits (at most 30m)."`
	Push         bool          `name:"push" help:"Ask the target to push updates to the sending agent's address, with a fresh token of which the server keeps only a hash."`
	WakeSleepers bool          `name:"wake-sleepers" help:"On the network, by discovery: when no eligible agent is live, choose one that sleeps and can be woken (an inbox agent with a working wake); the task waits in its inbox while its wake goes out."`
	targetFlags  `embed:""`
}

// onNetwork reports whether the flags or the environment ask for a send
// on the network: a community, a skill, or an agent token (sba_…) in
// --token, in --token-env's variable or in $SWITCHBOARD_AGENT_TOKEN.
// Otherwise a token flag holds the target's peer token.
func (c *SendCmd) onNetwork() bool {
	agentToken := func(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "sba_") }
	return c.Community != "" || c.Skill != "" || c.WakeSleepers || agentToken(c.Token) ||
		(c.TokenEnv != "" && agentToken(os.Getenv(c.TokenEnv))) || os.Getenv(agentTokenEnv) != ""
}

// Run sends the message.
func (c *SendCmd) Run(ctx context.Context, cli *CLI) error {
	if c.Timeout <= 0 || c.Timeout > maxWaitTimeout {
		return fmt.Errorf("--timeout must be between 1s and %s", maxWaitTimeout)
	}
	text, err := c.text(cli)
	if err != nil {
		return err
	}
	if c.Agent == "" && !c.onNetwork() {
		c.Agent = cli.defaultAgent() // the agent switchboard init configured
	}
	if c.Agent == "" {
		return c.runNetwork(ctx, cli, text)
	}
	if c.Target == "" && c.Community == "" && c.Skill == "" && !c.WakeSleepers {
		return errors.New("name the agent to send to (a URL, an alias or a handle), or let discovery choose one with --community or --skill")
	}
	if c.Community != "" || c.Skill != "" || c.WakeSleepers {
		// The owner sends on the network as its agent (POST /tasks with
		// the owner token): no agent token needed.
		cl, err := newClient(cli)
		if err != nil {
			return err
		}
		cl.http.Timeout = maxNetworkWait + time.Minute // a blocking send waits for the answer
		return c.sendOnNetwork(ctx, cli, cl, c.Agent, text)
	}
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var sender ownerapi.Agent
	if err := cl.do(ctx, "GET", "/agents/"+pathEscape(c.Agent), nil, &sender); err != nil {
		return fmt.Errorf("sending agent %s: %w", c.Agent, err)
	}
	target, err := c.resolveTarget(cli, cl, c.Target)
	if err != nil {
		return err
	}
	hc := target.httpClient(cl.base)

	cctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	card, err := front.ResolveCard(cctx, hc, target.url, "")
	cancel()
	if err != nil {
		return remoteError(target, err)
	}
	front.PinInterfaces(card, target.url, false, func(cardURL string) {
		fmt.Fprintf(cli.errOut, "switchboard: note: the card names %s; sending to %s's host instead\n", cardURL, target.url)
	})
	iface, proto, err := front.PickInterface(card)
	if err != nil {
		return fmt.Errorf("%s: %w", target.name, err)
	}
	if c.Push && !card.Capabilities.PushNotifications {
		return fmt.Errorf("%s does not take push notifications (its card says so); send without --push and follow with  switchboard poll", target.name)
	}
	pushToken := ""
	if c.Push {
		pushToken = newPushToken()
	}
	msgID := switchboard.NewID()

	// Record first: a push may arrive before the answer does.
	var rec ownerapi.Outbound
	err = cl.do(ctx, "POST", "/agents/"+pathEscape(sender.Handle)+"/outbox", ownerapi.OutboundCreate{
		Target: c.Target, Endpoint: iface.URL, Protocol: string(proto), ContextID: c.Context,
		TaskID: c.Task, MessageID: msgID, Text: text, PushToken: pushToken,
	}, &rec)
	if err != nil {
		return fmt.Errorf("record the send: %w", err)
	}
	if c.Push && !publicURL(rec.PushURL) {
		fmt.Fprintf(cli.errOut, "switchboard: note: pushes go to %s, which other hosts cannot reach; start the server with --public-url\n", rec.PushURL)
	}

	remote, err := front.NewEndpointClient(ctx, hc, iface)
	if err != nil {
		return fmt.Errorf("%s: %w", target.name, err)
	}
	defer remote.Destroy()
	var before *a2a.TaskStatus
	if c.Wait && c.Task != "" {
		before = taskStatus(ctx, remote, a2a.TaskID(c.Task))
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ID, msg.ContextID, msg.TaskID = msgID, c.Context, a2a.TaskID(c.Task)
	req := &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}}
	if c.Push {
		req.Config.PushConfig = &a2a.PushConfig{URL: rec.PushURL, Token: pushToken}
	}
	sctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	res, sendErr := remote.SendMessage(sctx, req)
	cancel()
	update := ownerapi.OutboundResult{Source: switchboard.OutboundFromSend}
	var task *a2a.Task
	switch r := res.(type) {
	case *a2a.Task:
		task = r
		update.Task = r
	case *a2a.Message:
		update.Reply = r
	}
	if sendErr != nil {
		update.Error = sendErr.Error()
	}
	if rec, err = recordResult(ctx, cl, rec.ID, update); err != nil {
		return fmt.Errorf("record the answer: %w", err)
	}
	if sendErr != nil {
		return remoteError(target, sendErr)
	}
	if c.Wait && task != nil {
		if err := c.wait(ctx, cli, cl, remote, &rec, task, before); err != nil {
			return err
		}
	}
	return printOutbound(cli, cl, &rec, spoken(rec.Protocol, iface), target.name)
}

// text returns the message: --text, or stdin for "-".
func (c *SendCmd) text(cli *CLI) (string, error) {
	text := c.Text
	if text == "-" {
		if c.TokenStdin {
			return "", errors.New("--text - and --token-stdin both read stdin; use --token-env or an alias")
		}
		b, err := io.ReadAll(io.LimitReader(cli.stdin, 1<<20+1))
		if err != nil {
			return "", fmt.Errorf("read stdin: %w", err)
		}
		text = strings.TrimRight(string(b), "\n")
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("--text is empty")
	}
	return text, nil
}

// wait polls the remote task until it is finished or needs input, or the
// timeout passes, recording each change. before, if known, is the task's
// status before this send: an answer that still shows it is the task as it
// was, not the agent's answer. (A server may answer a follow-up at once
// with the task before its agent has read the message: @a2a-js/sdk 1.x
// executors must publish the task first, input-required and all.) So
// --wait goes on until the status differs from before.
func (c *SendCmd) wait(ctx context.Context, cli *CLI, cl *client, remote *a2aclient.Client, rec *ownerapi.Outbound, task *a2a.Task, before *a2a.TaskStatus) error {
	deadline := time.Now().Add(c.Timeout)
	interval := 250 * time.Millisecond
	cur := task.Status
	for !settled(cur.State) || sameStatus(&cur, before) {
		if time.Now().After(deadline) {
			fmt.Fprintf(cli.errOut, "switchboard: still %s after %s; follow with  switchboard poll %s\n", switchboard.ShortState(cur.State), c.Timeout, rec.ID)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
		interval = min(interval*2, waitPollMax)
		gctx, cancel := context.WithTimeout(ctx, remoteTimeout)
		t, err := remote.GetTask(gctx, &a2a.GetTaskRequest{ID: task.ID})
		cancel()
		if err != nil {
			fmt.Fprintf(cli.errOut, "switchboard: poll: %v\n", err)
			continue
		}
		stale := sameStatus(&cur, before)
		if t.Status.State == cur.State && (!stale || sameStatus(&t.Status, before)) {
			continue
		}
		cur = t.Status
		updated, err := recordResult(ctx, cl, rec.ID, ownerapi.OutboundResult{Source: switchboard.OutboundFromPoll, Task: t})
		if err != nil {
			return fmt.Errorf("record the answer: %w", err)
		}
		*rec = updated
	}
	return nil
}

// recordResult records what the sender learnt about the remote task of
// the outbound record id (PATCH /outbox/{id}) and returns the record as
// the server now has it. The answer is decoded into a fresh record: decoding
// into the old one would keep what the answer leaves out, such as the
// status message of the task as it was.
func recordResult(ctx context.Context, cl *client, id string, res ownerapi.OutboundResult) (ownerapi.Outbound, error) {
	var rec ownerapi.Outbound
	err := cl.do(ctx, "PATCH", "/outbox/"+pathEscape(id), res, &rec)
	return rec, err
}

// taskStatus reads the status of a remote task; nil if the read fails.
func taskStatus(ctx context.Context, remote *a2aclient.Client, id a2a.TaskID) *a2a.TaskStatus {
	gctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	t, err := remote.GetTask(gctx, &a2a.GetTaskRequest{ID: id, HistoryLength: new(0)})
	if err != nil {
		return nil
	}
	return &t.Status
}

// sameStatus reports whether a is the status b, as far as a client can
// tell: the same state, time and message. b nil: no.
func sameStatus(a, b *a2a.TaskStatus) bool {
	if b == nil || a.State != b.State {
		return false
	}
	if (a.Timestamp == nil) != (b.Timestamp == nil) || (a.Timestamp != nil && !a.Timestamp.Equal(*b.Timestamp)) {
		return false
	}
	if (a.Message == nil) != (b.Message == nil) {
		return false
	}
	return a.Message == nil || a.Message.ID == b.Message.ID
}

// settled reports whether a remote task in state s waits for nothing more
// from its agent: finished, or waiting for our input.
func settled(s a2a.TaskState) bool {
	return s.Terminal() || switchboard.Interrupted(s)
}

// newPushToken returns a fresh random push notification token.
func newPushToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// spoken names the version (1.0 or 0.3, as recorded, whatever patch level
// the card names) and the binding of an interface as send and poll print
// them: "1.0", or "1.0 over gRPC" for a binding other than JSON-RPC.
func spoken(version string, iface *a2a.AgentInterface) string {
	s := version
	if b := front.BindingName(iface.ProtocolBinding); b != front.BindingName(a2a.TransportProtocolJSONRPC) {
		s += " over " + b
	}
	return s
}

// recordedInterface returns the interface of an outbox record's endpoint
// and version in the binding the target's card offers there, as send
// chose it (the record keeps no binding), or JSON-RPC when the card
// cannot be read or offers none there now.
func recordedInterface(ctx context.Context, hc *http.Client, endpoint string, proto switchboard.ProtocolVersion) *a2a.AgentInterface {
	cctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	if card, err := front.ResolveCard(cctx, hc, endpoint, ""); err == nil {
		front.PinInterfaces(card, endpoint, false, nil)
		if iface, p, err := front.PickInterface(card); err == nil && p == proto && iface.URL == endpoint {
			return iface
		}
	}
	return front.EndpointInterface(endpoint, proto)
}

// printOutbound prints a record after a send or a poll; proto names the
// version (and binding) spoken.
func printOutbound(cli *CLI, cl *client, rec *ownerapi.Outbound, proto, name string) error {
	if cl.json {
		return cl.printJSON(rec)
	}
	task := rec.TaskID
	if task == "" {
		task = "(none: answered with a message)"
	}
	fmt.Fprintf(cl.out, "sent to %s (A2A %s): task %s  context %s  %s\n", name, proto, task, rec.ContextID, rec.State)
	if rec.Push {
		fmt.Fprintf(cl.out, "  updates are pushed to %s\n", rec.PushURL)
	}
	if text := lastText(rec); text != "" {
		writeUntrusted(cl.out, text)
	}
	fmt.Fprintf(cl.out, "outbox %s  (switchboard poll %s)\n", rec.ID, rec.ID)
	return nil
}

// OutboxCmd lists what agents sent.
type OutboxCmd struct {
	Agent string `name:"agent" help:"Only this agent (handle or id); default: the one switchboard init configured, else all of yours."`
	Limit int    `name:"limit" short:"n" default:"50" help:"At most this many per agent, most recently updated first."`
}

// Run lists the records.
func (c *OutboxCmd) Run(ctx context.Context, cli *CLI) error {
	cl, agents, err := ownerAgents(ctx, cli, c.Agent)
	if err != nil {
		return err
	}
	var boxes []ownerapi.Outbox
	for _, a := range agents {
		var b ownerapi.Outbox
		if err := cl.do(ctx, "GET", fmt.Sprintf("/agents/%s/outbox?limit=%d", pathEscape(a), c.Limit), nil, &b); err != nil {
			return err
		}
		boxes = append(boxes, b)
	}
	if cl.json {
		return cl.printJSON(boxes)
	}
	n := 0
	for _, b := range boxes {
		for _, o := range b.Outbox {
			n++
			task := o.TaskID
			if task == "" {
				task = "-"
			}
			fmt.Fprintf(cl.out, "%s  agent %s → %s  task %s  context %s  %s  %s\n", o.ID, b.Agent, o.Target, task,
				orDash(o.ContextID), o.State, o.UpdatedAt.Format(time.RFC3339))
			if o.Error != "" {
				fmt.Fprintf(cl.out, "  error: %s\n", o.Error)
			} else if text := lastText(&o); text != "" {
				writeUntrusted(cl.out, preview(text, outboxPreview))
			}
		}
	}
	if n == 0 {
		fmt.Fprintln(cl.out, "nothing sent")
	}
	return nil
}

// lastText is the text of the latest update of o that had one.
func lastText(o *ownerapi.Outbound) string {
	for i := len(o.Updates) - 1; i >= 0; i-- {
		if o.Updates[i].Text != "" {
			return o.Updates[i].Text
		}
	}
	return ""
}

// outboxPreview is how much of the last answer the outbox shows.
const outboxPreview = 300

// preview cuts text to at most n characters, marking the cut.
func preview(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	return string(r[:n]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PollCmd fetches a sent task again.
type PollCmd struct {
	ID          string `arg:"" help:"Outbox id (switchboard outbox)."`
	targetFlags `embed:""`
}

// Run polls the remote task and records it.
func (c *PollCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	var rec ownerapi.Outbound
	if err := cl.do(ctx, "GET", "/outbox/"+pathEscape(c.ID), nil, &rec); err != nil {
		return err
	}
	if rec.TaskID == "" {
		return fmt.Errorf("the target named no task for %s (%s); nothing to poll", rec.ID, rec.State)
	}
	target, err := c.resolveTarget(cli, cl, rec.Target)
	if err != nil {
		return err
	}
	// The call goes to the recorded endpoint, whatever the name stands for
	// now: the guard and the token's origin follow it.
	target.url = rec.Endpoint
	hc := target.httpClient(cl.base)
	iface := recordedInterface(ctx, hc, rec.Endpoint, switchboard.ProtocolVersion(rec.Protocol))
	remote, err := front.NewEndpointClient(ctx, hc, iface)
	if err != nil {
		return fmt.Errorf("%s: %w", target.name, err)
	}
	defer remote.Destroy()
	gctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	task, err := remote.GetTask(gctx, &a2a.GetTaskRequest{ID: a2a.TaskID(rec.TaskID)})
	cancel()
	if err != nil {
		return remoteError(target, err)
	}
	if rec, err = recordResult(ctx, cl, rec.ID, ownerapi.OutboundResult{Source: switchboard.OutboundFromPoll, Task: task}); err != nil {
		return fmt.Errorf("record the answer: %w", err)
	}
	return printOutbound(cli, cl, &rec, spoken(rec.Protocol, iface), rec.Target)
}

// publicURL reports whether other hosts may reach u: its host is not
// localhost nor a loopback, private or special address.
func publicURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := strings.ToLower(p.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return !netguard.Special(ip.Unmap())
	}
	return true
}
