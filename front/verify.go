package front

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// VerifyMethod is the JSON-RPC method Verify sends: no A2A server knows
// it, so no task is created, and any JSON-RPC answer proves the path.
const VerifyMethod = "switchboard/verify-unknown-method"

// verifyTimeout bounds Verify.
const verifyTimeout = 20 * time.Second

// Verification is what Verify found.
type Verification struct {
	OK           bool   `json:"ok"`
	Reason       string `json:"reason"`
	Status       int    `json:"status,omitempty"`
	RPCErrorCode int    `json:"rpc_error_code,omitempty"`
	Detail       string `json:"detail,omitempty"`
	Method       string `json:"method"`
	// Binding is the binding the request went in: JSON-RPC, HTTP+JSON
	// or gRPC (the upstream's card decides, as for forwarding).
	Binding string `json:"binding"`
	// Sent says which credentials went with the request (never their values).
	Sent struct {
		Bearer  bool     `json:"bearer"`
		Headers []string `json:"headers,omitempty"`
	} `json:"sent"`
}

// Verify sends a request that creates nothing to an agent's upstream
// through the real path (its client, credentials and bounds), in the
// binding the forwarding speaks, and classifies the answer. Over
// JSON-RPC it is an unknown method, and reachable is any JSON-RPC answer;
// over HTTP+JSON or gRPC (an upstream whose card offers no JSON-RPC) it
// is GetTask of a task that does not exist, and reachable is the answer
// that it does not.
func (s *Service) Verify(ctx context.Context, agentID string) (*Verification, error) {
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return nil, err
	}
	v := &Verification{Method: VerifyMethod}
	v.Sent.Bearer = f.Credentials.Bearer != ""
	for k := range f.Credentials.Headers {
		v.Sent.Headers = append(v.Sent.Headers, k)
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	obs := &observation{}
	v.Binding = BindingName(a2a.TransportProtocolJSONRPC)
	if up, err := e.fw.connect(withObservation(WithPeer(ctx, "switchboard-verify"), obs)); err == nil {
		defer e.fw.release(up)
		if up.binding != v.Binding {
			return s.verifyTask(ctx, f, e, v, up)
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "switchboard-verify-" + rand.Text(), "method": VerifyMethod, "params": map[string]any{}})
	req, err := http.NewRequestWithContext(withObservation(WithPeer(ctx, "switchboard-verify"), obs), http.MethodPost, f.Upstream, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := e.client.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var rpc struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		raw, rerr := io.ReadAll(resp.Body)
		if rerr != nil {
			err = rerr
		} else if json.Unmarshal(raw, &rpc) == nil && rpc.JSONRPC == "2.0" && resp.StatusCode != 401 && resp.StatusCode != 403 {
			v.OK, v.Reason, v.Status = true, switchboard.FrontReachable, resp.StatusCode
			if rpc.Error != nil {
				v.RPCErrorCode = rpc.Error.Code
			}
			return v, nil
		}
	}
	v.Reason, v.Status = classify(err, obs, f.Credentials)
	if err != nil {
		v.Detail = Describe(err, e.secrets)
	} else {
		v.Detail = "the answer was not JSON-RPC"
	}
	if v.Reason == switchboard.FrontUnexpected && v.Status == 0 {
		v.Reason = switchboard.FrontNetwork
	}
	return v, nil
}

// verifyTask verifies the path to an upstream spoken to in HTTP+JSON or
// gRPC: GetTask of a task that does not exist, which any A2A server
// answers with TaskNotFound.
func (s *Service) verifyTask(ctx context.Context, f *switchboard.Front, e *entry, v *Verification, up *upstream) (*Verification, error) {
	v.Method, v.Binding = "GetTask", up.binding
	obs := &observation{}
	_, err := up.client.GetTask(withObservation(WithPeer(ctx, "switchboard-verify"), obs), &a2a.GetTaskRequest{ID: a2a.TaskID("switchboard-verify-" + rand.Text())})
	obs.mu.Lock()
	v.Status = obs.status
	obs.mu.Unlock()
	if err == nil || errors.Is(err, a2a.ErrTaskNotFound) {
		v.OK, v.Reason = true, switchboard.FrontReachable
		return v, nil
	}
	v.Reason, v.Status = classify(err, obs, f.Credentials)
	v.Detail = Describe(err, e.secrets)
	if v.Reason == switchboard.FrontUnexpected && v.Status == 0 {
		v.Reason = switchboard.FrontNetwork
	}
	return v, nil
}
