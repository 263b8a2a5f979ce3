package oauthhttp

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/pairing"
)

// oauthBodyLimit bounds the body of a device authorization or token request.
const oauthBodyLimit = 4096

// pairingAgent finds the agent of a pairing route's path and answers 404
// itself when there is none, or when pairing is off for it. The routes
// that call it are served only with a pairing service.
func (s *Face) pairingAgent(w http.ResponseWriter, r *http.Request) (*switchboard.Agent, bool) {
	agent, ok := s.AgentFromPath(w, r)
	if !ok {
		return nil, false
	}
	if !pairing.Enabled(agent) {
		httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "pairing is off for this agent"})
		return nil, false
	}
	return agent, true
}

// readOAuthForm reads a device authorization or token request's
// parameters: form-encoded, or a JSON object of strings when the content
// type says JSON. Of a repeated form key the first value counts.
func readOAuthForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	body, err := io.ReadAll(http.MaxBytesReader(httpapi.UnwrapRecorder(w), r.Body, oauthBodyLimit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, switchboard.Errorf(switchboard.ETOOLARGE, "the body is larger than %d bytes", oauthBodyLimit)
		}
		return nil, switchboard.Errorf(switchboard.EINVALID, "the body could not be read")
	}
	return parseOAuthForm(r.Header.Get("Content-Type"), body)
}

// parseOAuthForm parses an OAuth request body of the given content type.
func parseOAuthForm(contentType string, body []byte) (url.Values, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if strings.Contains(mt, "json") {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, switchboard.Errorf(switchboard.EINVALID, "the body is not a JSON object")
		}
		v := url.Values{}
		for k, x := range m {
			switch x := x.(type) {
			case string:
				v.Set(k, x)
			case nil:
			default:
				return nil, switchboard.Errorf(switchboard.EINVALID, "%s must be a string", switchboard.Truncate(k, 32))
			}
		}
		return v, nil
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "the body is not form-encoded")
	}
	return v, nil
}

// deviceAuthorization is the answer of a device authorization request
// (RFC 8628 section 3.2).
type deviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
	ReplacesLabel           string `json:"replaces_label,omitempty"`
}

// tokenAnswer is the answer of a redeemed device code.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	PeerLabel   string `json:"peer_label"`
	Replaced    bool   `json:"replaced,omitempty"`
}

// oauthErrorBody is an OAuth error (RFC 6749 section 5.2).
type oauthErrorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// handleDeviceAuthorization serves POST {address}/oauth/device_authorization.
func (s *Face) handleDeviceAuthorization(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.pairingAgent(w, r)
	if !ok {
		return
	}
	form, err := readOAuthForm(w, r)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	g, err := s.Pairing.Authorize(r.Context(), agent, pairing.Request{
		ClientName: form.Get("client_name"), ClientID: form.Get("client_id"), CardURL: form.Get("agent_card_url"),
		Requester: s.ClientKey(r), Bearer: httpapi.BearerToken(r),
	})
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	verify := s.ReachedBase(r, agent) + httpapi.DevicePagePath
	code := pairing.FormatUserCode(g.UserCode)
	w.Header().Set("Pragma", "no-cache")
	httpapi.WriteJSON(w, http.StatusOK, deviceAuthorization{
		DeviceCode: g.DeviceCode, UserCode: code, VerificationURI: verify,
		VerificationURIComplete: verify + "?user_code=" + code,
		ExpiresIn:               int(g.ExpiresIn / time.Second), Interval: int(g.Interval / time.Second),
		ReplacesLabel: g.ReplacesLabel,
	})
}

// handleOAuthToken serves POST {address}/oauth/token and POST
// /oauth/token: the device code grant of pairing (the default agent's at
// the root), and the authorization code and refresh token grants of MCP
// clients (the account endpoint's at the root).
func (s *Face) handleOAuthToken(w http.ResponseWriter, r *http.Request) {
	form, err := readOAuthForm(w, r)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	if grant, ok := s.grants[form.Get("grant_type")]; ok {
		grant(w, r, form)
		return
	}
	s.otherGrant(w, r, form)
}

// handleDeviceGrant answers a token request of a grant type MCP's OAuth
// does not serve at an address that takes pairing requests: the device
// code grant redeems a device code, any other is refused.
func (s *Face) handleDeviceGrant(w http.ResponseWriter, r *http.Request, form url.Values) {
	agent, ok := s.pairingAgent(w, r)
	if !ok {
		return
	}
	if form.Get("grant_type") != httpapi.DeviceGrantType {
		s.writeOAuthError(w, r, &pairing.Error{Code: pairing.ErrUnsupportedGrantType,
			Description: "grant_type must be " + httpapi.DeviceGrantType})
		return
	}
	tok, err := s.Pairing.Redeem(r.Context(), agent, form.Get("device_code"), s.ClientKey(r))
	if err != nil {
		s.writeOAuthError(w, r, err) // a poll that waits or fails changes nothing: not recorded
		return
	}
	s.recordPeerToken(r, switchboard.AuditPeer, tok.Label, agent, tok.Label, tok.Replaced)
	w.Header().Set("Pragma", "no-cache")
	httpapi.WriteJSON(w, http.StatusOK, tokenAnswer{AccessToken: tok.Secret, TokenType: "Bearer", PeerLabel: tok.Label, Replaced: tok.Replaced})
}

// writeOAuthError answers with an OAuth error: a *pairing.Error as it
// says, EINVALID and ETOOLARGE as invalid_request, ERATELIMITED as 429
// slow_down (Retry-After 600), other codes as server_error.
func (s *Face) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *pairing.Error
	if !errors.As(err, &oe) {
		switch switchboard.ErrorCode(err) {
		case switchboard.EINVALID, switchboard.ETOOLARGE:
			oe = &pairing.Error{Code: pairing.ErrInvalidRequest, Description: switchboard.ErrorMessage(err)}
		case switchboard.ERATELIMITED:
			oe = &pairing.Error{Code: pairing.ErrSlowDown, Description: switchboard.ErrorMessage(err),
				Status: http.StatusTooManyRequests, RetryAfter: 10 * time.Minute}
		default:
			s.LogInternal(r, err)
			oe = &pairing.Error{Code: pairing.ErrServerError, Description: "internal error", Status: http.StatusInternalServerError}
		}
	}
	status := oe.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	if oe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(oe.RetryAfter.Round(time.Second)/time.Second)))
	}
	w.Header().Set("Pragma", "no-cache")
	httpapi.WriteJSON(w, status, oauthErrorBody{Error: oe.Code, Description: oe.Description})
}

// recordPeerToken records a token given to an outside caller of agent (a
// pairing's peer token), by actor; replaced says it took the place of one.
func (s *Face) recordPeerToken(r *http.Request, kind switchboard.AuditActorKind, actor string, agent *switchboard.Agent,
	label string, replaced bool) {
	action := switchboard.AuditTokenIssue
	if replaced {
		action = switchboard.AuditTokenRotate
	}
	e := audit.Entry(nil, s.Clients.Addr(r), action, audit.Token(agent.AccountID, switchboard.TokenPeer, label, "agent "+agent.Handle+", by pairing"), nil)
	e.ActorKind, e.ActorID = kind, actor
	s.Audit.Record(r.Context(), e)
}
