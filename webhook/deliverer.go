package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/tracing"
)

// Request headers.
const (
	HeaderDelivery  = "X-Switchboard-Delivery"
	HeaderTimestamp = "X-Switchboard-Timestamp"
	HeaderSignature = "X-Switchboard-Signature"
)

// maxAnswer bounds the answer read from an endpoint.
const maxAnswer = 8 << 20

var _ switchboard.Deliverer = (*Deliverer)(nil)

// Deliverer implements switchboard.Deliverer for webhook agents.
//
// Deliver follows a redirect only when it keeps the method and the body
// (307, 308) and stays on the endpoint's origin (scheme, host and port),
// whatever redirect policy Client has; Client's own policy (the network
// guard's) still checks every hop it follows.
type Deliverer struct {
	// Client makes the requests; it should be a netguard client. It is
	// not changed: Deliver uses a copy with the redirect rule installed.
	Client *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// Now returns the current time, for signatures; tests may replace it.
	Now func() time.Time
}

// Task is the body posted to {endpoint}/a2a/task: the original network's
// shape (from_agent_id, task_description, payload.message as text), which
// a receiver written for it reads as it always did, and Switchboard's
// additions in fields of their own.
type Task struct {
	// FromAgentID names the sender by id: the sending agent's, or the
	// stable id of the outside peer that sent the message.
	FromAgentID string `json:"from_agent_id"`
	// TaskDescription is the task_description the sender gave on the
	// network (POST /tasks), or else the text of the message (untrusted).
	TaskDescription string `json:"task_description"`
	Payload         struct {
		// Message is the text of the message (untrusted), as the original
		// network sent it: without the task_description when the sender
		// gave both.
		Message string `json:"message"`
	} `json:"payload"`
	// From is the sender's name for people: the peer token's label, or the
	// sending agent's handle (untrusted unless FromAgent).
	From string `json:"from"`
	// FromAgent is set when the sender is an agent of this deployment:
	// From is then its handle and FromAgentID its id, both verified by
	// Switchboard (it sent with its own agent token).
	FromAgent bool `json:"from_agent,omitempty"`
	// Message is the whole A2A 1.0 message, with taskId and contextId: its
	// file and data parts too (untrusted).
	Message    *a2a.Message `json:"message"`
	TaskID     string       `json:"task_id"`
	ContextID  string       `json:"context_id"`
	DeliveryID string       `json:"delivery_id"`
}

// Answer is what the endpoint answers.
type Answer struct {
	// Status is completed (also success, ok, done), failed (also error),
	// rejected or input-required.
	Status string `json:"status"`
	// Agent names the answering agent (informational).
	Agent string `json:"agent"`
	// Result is the answer: a string, or any JSON value (sent on as data).
	Result json.RawMessage `json:"result"`
}

// Deliver implements switchboard.Deliverer.
func (d *Deliverer) Deliver(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
	if o.Send == nil {
		return nil, nil // nothing but messages is delivered to webhooks
	}
	body, err := json.Marshal(newTask(o))
	if err != nil {
		return nil, fmt.Errorf("encode webhook task: %w", err)
	}
	endpoint := strings.TrimRight(agent.Endpoint, "/") + "/a2a/task"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook request: %w", err)
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.UserAgent)
	req.Header.Set(HeaderDelivery, o.Delivery.ID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(agent.WebhookSecret, ts, body))
	tracing.SetHeader(req.Header, o.Delivery.TraceParent) // when the deployment traces

	resp, err := d.client().Do(req)
	if err != nil {
		return nil, requestError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", netguard.DescribeError(err))
	}
	if resp.StatusCode/100 != 2 {
		return nil, statusError(resp.StatusCode)
	}
	if len(data) > maxAnswer {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the webhook's answer is larger than %d bytes", maxAnswer)
	}
	return answerEvent(o.Task, data)
}

// The errors of an attempt never name the endpoint's URL, which may hold a
// secret: they become the delivery's last error, which the owner reads and
// which the task's peer reads when the task fails at its deadline.

// statusError describes an answer with a status other than 2xx, as
// "503 Service Unavailable". The endpoint's own reason phrase is not used,
// nor a redirect's Location.
func statusError(code int) error {
	var err error
	if text := http.StatusText(code); text != "" {
		err = fmt.Errorf("%d %s", code, text)
	} else {
		err = fmt.Errorf("HTTP status %d", code)
	}
	if code/100 == 3 {
		return fmt.Errorf("%w: the endpoint redirected the delivery; webhook deliveries follow only 307 and 308 redirects to the same scheme, host and port", err)
	}
	return err
}

func newTask(o *switchboard.Offer) *Task {
	text := switchboard.MessageText(o.Send.Message)
	t := &Task{
		FromAgentID:     o.Task.PeerID,
		TaskDescription: text,
		From:            o.Task.PeerLabel,
		FromAgent:       o.Task.PeerKind == switchboard.PeerAgent,
		Message:         o.Send.Message,
		TaskID:          string(o.Task.ID()),
		ContextID:       o.Task.A2A.ContextID,
		DeliveryID:      o.Delivery.ID,
	}
	t.Payload.Message = text
	// Work sent with a task_description and a payload.message has both
	// as text parts, the description first, and names the description.
	if desc, _ := o.Send.Message.Metadata[switchboard.MetaTaskDescription].(string); desc != "" {
		t.TaskDescription = desc
		if rest, ok := strings.CutPrefix(text, desc+"\n"); ok && rest != "" {
			t.Payload.Message = rest
		}
	}
	return t
}

// Sign returns the signature header value of a request: "v1=" and the hex
// HMAC-SHA256, keyed with the agent's webhook secret, of the timestamp, a
// dot and the body.
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether a signature header is valid for the request and
// its timestamp is within tolerance of now: what an endpoint should check.
func Verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return false
	}
	return hmac.Equal([]byte(signature), []byte(Sign(secret, timestamp, body)))
}

// answerEvent turns an endpoint's answer into the A2A event it stands for.
func answerEvent(t *switchboard.Task, data []byte) (a2a.Event, error) {
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the webhook's answer is not JSON {\"status\",\"agent\",\"result\"}")
	}
	part, err := resultPart(a.Result)
	if err != nil {
		return nil, err
	}
	msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, TaskID: t.ID(), ContextID: t.A2A.ContextID}
	if part != nil {
		msg.Parts = a2a.ContentParts{part}
	}
	status := func(state a2a.TaskState) a2a.Event {
		st := &a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Status: a2a.TaskStatus{State: state}}
		if part != nil {
			st.Status.Message = msg
		}
		return st
	}
	switch strings.ToLower(strings.TrimSpace(a.Status)) {
	case "completed", "complete", "success", "succeeded", "ok", "done":
		if part == nil {
			return status(a2a.TaskStateCompleted), nil
		}
		return msg, nil // a direct answer: it completes the task with an artifact
	case "failed", "failure", "error":
		return status(a2a.TaskStateFailed), nil
	case "rejected":
		return status(a2a.TaskStateRejected), nil
	case "input-required", "input_required":
		return status(a2a.TaskStateInputRequired), nil
	}
	return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the webhook answered an unknown status %q", switchboard.Truncate(a.Status, 40))
}

// resultPart returns the part an answer's result becomes: text for a JSON
// string, data for any other value, none when there is no result.
func resultPart(raw json.RawMessage) (*a2a.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the webhook's result is not valid JSON")
		}
		return a2a.NewTextPart(s), nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the webhook's result is not valid JSON")
	}
	return a2a.NewDataPart(v), nil
}
