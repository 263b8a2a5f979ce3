package dashboard

import (
	"bytes"
	"crypto/subtle"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/pairing"
)

// deviceCookie holds the /device page's CSRF token (double submit: anyone
// may deny, signed in or not).
const deviceCookie = "switchboard_device"

// devicePolicy is the /device page's Content-Security-Policy: no script at
// all, one style block allowed by its nonce, forms to this origin only.
const devicePolicy = "default-src 'none'; style-src 'nonce-%s'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// DevicePage serves the page where a pairing code is entered or followed
// ({address}/device, docs/pairing.md): it shows what the requester claims;
// the agent's owner, signed in to the console, approves or denies; anyone
// may deny. Decisions are compare-and-swap: a request decided meanwhile
// answers 409.
type DevicePage struct {
	console      *Console
	pairing      *pairing.Service
	defaultAgent string
	tmpl         *template.Template
}

// NewDevicePage returns the /device page of every agent, on the console's
// sign-in, Origin checks and per-address limiter. defaultAgent is the
// handle served at /device (empty: none).
func NewDevicePage(c *Console, p *pairing.Service, defaultAgent string) (*DevicePage, error) {
	t, err := template.ParseFS(templateFiles, "templates/device.html")
	if err != nil {
		return nil, err
	}
	return &DevicePage{console: c, pairing: p, defaultAgent: defaultAgent, tmpl: t}, nil
}

// IsDevicePath reports whether path is a /device page: /a/{handle}/device,
// or /device for the default agent.
func IsDevicePath(path string) bool {
	_, ok := deviceHandle(path)
	return ok
}

// deviceHandle returns the handle of a /device path ("" for /device).
func deviceHandle(path string) (string, bool) { return addressPage(path, "device") }

// addressPage returns the handle of path when it is the page at an
// address, /a/{handle}/{page}, or "" when it is the default agent's,
// /{page}.
func addressPage(path, page string) (string, bool) {
	if path == "/"+page {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, "/a/")
	if !ok {
		return "", false
	}
	handle, tail, ok := strings.Cut(rest, "/")
	return handle, ok && tail == page && handle != ""
}

// deviceView is what the page shows.
type deviceView struct {
	Nonce, CSRF, Action, Agent string
	// Problem is a sentence above the form; Notice one after a decision.
	Problem, Notice string
	// Request is set when the code names a pending request.
	Request *deviceRequest
	// Owner is set when the viewer may approve.
	Owner bool
	// Code is the code as typed, for the entry form.
	Code string
}

// deviceRequest is a pending request as the page shows it.
type deviceRequest struct {
	Code, ClientName, ClientID, CardURL, Requester, Replaces string
	MinutesLeft                                              int
	// CardPrivate: the claimed card is on a private host, which no one
	// outside the requester's network can read.
	CardPrivate bool
}

// ServeHTTP serves GET (the code entry form, or the request) and POST (a
// decision).
func (d *DevicePage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.console.reloadCrossSite(w, r) {
		return
	}
	handle, _ := deviceHandle(r.URL.Path)
	if handle == "" {
		handle = d.defaultAgent
	}
	v := &deviceView{Nonce: randomToken()[:22], Action: r.URL.Path}
	agent, err := d.console.Agents.FindAgentByHandle(r.Context(), strings.ToLower(handle))
	if err != nil || agent.AccountDisabled || !pairing.Enabled(agent) || handle == "" {
		d.render(w, r, http.StatusNotFound, &deviceView{Nonce: v.Nonce, Action: v.Action, Problem: "This address takes no pairing requests."})
		return
	}
	v.Agent = agent.Name
	if v.Agent == "" {
		v.Agent = agent.Handle
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		d.show(w, r, agent, v, r.URL.Query().Get("user_code"))
	case http.MethodPost:
		d.decide(w, r, agent, v)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		d.render(w, r, http.StatusMethodNotAllowed, &deviceView{Nonce: v.Nonce, Action: v.Action, Problem: "Method not allowed."})
	}
}

// show renders the request with the code, or the entry form with a reason.
func (d *DevicePage) show(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent, v *deviceView, code string) {
	v.CSRF = d.csrfCookie(w, r)
	if code == "" {
		d.render(w, r, http.StatusOK, v)
		return
	}
	v.Code = code
	if !d.allow(w, r, v) {
		return
	}
	p, err := d.pairing.Find(r.Context(), agent, code)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		v.Problem = "No request has that code. Check it and try again."
		d.render(w, r, http.StatusNotFound, v)
		return
	case err != nil:
		d.fail(w, r, v, err)
		return
	case p.Status != switchboard.PairingPending:
		v.Problem = "That request was " + string(p.Status) + " already."
		d.render(w, r, http.StatusConflict, v)
		return
	case !d.pairing.Now().Before(p.ExpiresAt):
		v.Problem = "That code has expired; the requester must start again."
		d.render(w, r, http.StatusGone, v)
		return
	}
	v.Request = &deviceRequest{Code: pairing.FormatUserCode(p.UserCode), ClientName: p.ClientName, ClientID: p.ClientID,
		CardURL: p.CardURL, CardPrivate: pairing.CardURLPrivate(p.CardURL), Requester: p.Requester, Replaces: p.ReplacesLabel,
		MinutesLeft: max(1, int(p.ExpiresAt.Sub(d.pairing.Now()).Minutes()+0.5))}
	v.Owner = d.owns(r, agent)
	d.render(w, r, http.StatusOK, v)
}

// decide applies a decision: approve (the agent's signed-in owner only)
// or deny (anyone).
func (d *DevicePage) decide(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent, v *deviceView) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	ck, _ := r.Cookie(deviceCookie)
	if !d.console.sameOrigin(r) || ck == nil || ck.Value == "" ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(ck.Value)) != 1 {
		v.CSRF = d.csrfCookie(w, r)
		v.Problem = "This form expired or came from another site. Open the link again."
		d.render(w, r, http.StatusForbidden, v)
		return
	}
	v.CSRF, v.Code = ck.Value, r.PostFormValue("user_code")
	if !d.allow(w, r, v) {
		return
	}
	var p *switchboard.Pairing
	var err error
	switch r.PostFormValue("decision") {
	case "approve":
		if !d.owns(r, agent) {
			v.Problem = "Only the agent's owner, signed in to the console, may approve. Anyone may deny."
			d.render(w, r, http.StatusForbidden, v)
			return
		}
		p, err = d.pairing.Approve(r.Context(), agent, v.Code, strings.TrimSpace(r.PostFormValue("label")), pairing.ByOwner)
	case "deny":
		by := pairing.ByPage
		if d.owns(r, agent) {
			by = pairing.ByOwner
		}
		p, err = d.pairing.Deny(r.Context(), agent, v.Code, by)
	default:
		v.Problem = "Choose approve or deny."
		d.render(w, r, http.StatusBadRequest, v)
		return
	}
	d.record(r, agent, r.PostFormValue("decision") == "approve", p, err)
	switch switchboard.ErrorCode(err) {
	case "":
	case switchboard.ENOTFOUND:
		v.Problem = "No request has that code."
		d.render(w, r, http.StatusNotFound, v)
		return
	case switchboard.ECONFLICT:
		v.Problem = "That request was decided meanwhile, or has expired."
		d.render(w, r, http.StatusConflict, v)
		return
	case switchboard.EINVALID:
		v.Problem = switchboard.ErrorMessage(err)
		d.render(w, r, http.StatusBadRequest, v)
		return
	default:
		d.fail(w, r, v, err)
		return
	}
	v.Code = ""
	if p.Status == switchboard.PairingApproved {
		v.Notice = "Approved: the requester's token is labelled " + strconv.Quote(p.Label) +
			". Revoke it any time with: switchboard token revoke --agent " + agent.Handle + " " + p.Label
	} else {
		v.Notice = "Denied: the requester gets no token."
	}
	d.render(w, r, http.StatusOK, v)
}

// owns reports whether the request's signed-in owner manages the agent.
func (d *DevicePage) owns(r *http.Request, agent *switchboard.Agent) bool {
	viewer, err := d.console.viewerOf(r)
	return err == nil && viewer != nil && (viewer.account.ID == agent.AccountID || viewer.account.IsOperator())
}

// allow counts a lookup or a decision against the address's limit and
// answers 429 itself when it is over.
func (d *DevicePage) allow(w http.ResponseWriter, r *http.Request, v *deviceView) bool {
	ok, retry, _ := d.console.Limiter.Allow(r.Context(), "device/"+d.console.clientKey(r))
	if ok {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Seconds()+0.5))))
	v.Problem = "Too many code lookups from your address; wait a minute and try again."
	d.render(w, r, http.StatusTooManyRequests, v)
	return false
}

// csrfCookie returns the page's CSRF token (Console.pageCSRF).
func (d *DevicePage) csrfCookie(w http.ResponseWriter, r *http.Request) string {
	return d.console.pageCSRF(w, r, deviceCookie)
}

// fail logs an unexpected error and says something went wrong.
func (d *DevicePage) fail(w http.ResponseWriter, r *http.Request, v *deviceView, err error) {
	d.console.Logger.Error("the device page", "err", err)
	v.Problem = "Something went wrong; try again."
	d.render(w, r, http.StatusInternalServerError, v)
}

// render writes the page with its headers: rendered in full first.
func (d *DevicePage) render(w http.ResponseWriter, _ *http.Request, status int, v *deviceView) {
	var buf bytes.Buffer
	if err := d.tmpl.Execute(&buf, v); err != nil {
		d.console.Logger.Error("render the device page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	writeStandalonePage(w, status, strings.Replace(devicePolicy, "%s", v.Nonce, 1), buf.Bytes())
}

// record records a decision on a pairing request of agent: by the
// signed-in owner, or by anyone (a denial from the page).
func (d *DevicePage) record(r *http.Request, agent *switchboard.Agent, approve bool, p *switchboard.Pairing, err error) {
	action := switchboard.AuditPairingApprove
	if !approve {
		action = switchboard.AuditPairingDeny
	}
	t := audit.Target{AccountID: agent.AccountID, Kind: audit.KindPairing, ID: auditUserCode(r.PostFormValue("user_code")),
		Detail: "agent " + agent.Handle}
	if p != nil && p.Label != "" {
		t.Detail += ", peer token " + p.Label
	}
	d.console.record(r, d.console.viewerAccount(r), action, t, err)
}

// auditUserCode is a user code as the audit log names it: as the page
// shows it (ABCD-EFGH), or as typed if it is no code.
func auditUserCode(s string) string {
	if c, ok := pairing.NormalizeUserCode(s); ok {
		return pairing.FormatUserCode(c)
	}
	return s
}
