package dashboard

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// consentCookie holds the consent page's CSRF token (double submit), for
// the page's path only.
const consentCookie = "switchboard_consent"

// consentPolicy is the consent page's Content-Security-Policy: no script,
// one style block by its nonce, forms to this origin and to the origin
// the client's redirect URI names (form-action also governs where the
// answer to the form redirects).
const consentPolicy = "default-src 'none'; style-src 'nonce-%s'; form-action %s; frame-ancestors 'none'; base-uri 'none'"

// originRE is an origin that may be written into the policy as it is.
var originRE = regexp.MustCompile(`^https?://[A-Za-z0-9.:\[\]-]+$`)

// consentParams are the parameters of an authorization request that the
// consent form carries from the GET to the POST.
var consentParams = []string{"response_type", "client_id", "redirect_uri", "state", "code_challenge",
	"code_challenge_method", "resource", "scope"}

// ConsentPage serves the authorization endpoint of MCP clients
// ({address}/oauth/authorize for the agent's MCP endpoint, /oauth/authorize
// for the account endpoint; docs/mcp.md, "OAuth"): the request is checked,
// a visitor who is not signed in is sent to sign in and back, and the
// owner of the agent (or the account) approves or denies.
type ConsentPage struct {
	console *Console
	oauth   *mcpauth.Service
	tmpl    *template.Template
}

// NewConsentPage returns the consent page, on the console's sign-in and
// Origin checks.
func NewConsentPage(c *Console, svc *mcpauth.Service) (*ConsentPage, error) {
	t, err := template.ParseFS(templateFiles, "templates/consent.html")
	if err != nil {
		return nil, err
	}
	return &ConsentPage{console: c, oauth: svc, tmpl: t}, nil
}

// IsAuthorizePath reports whether path is an authorization endpoint:
// /oauth/authorize, or /a/{handle}/oauth/authorize.
func IsAuthorizePath(path string) bool {
	_, ok := authorizeHandle(path)
	return ok
}

// authorizeHandle returns the handle of an authorization path ("" for
// /oauth/authorize).
func authorizeHandle(path string) (string, bool) { return addressPage(path, "oauth/authorize") }

// consentView is what the page shows.
type consentView struct {
	Nonce, CSRF, Action, Problem string
	// Target names what the client asks to open: an agent or the account.
	Target string
	// Client is the claimed name; ReturnHost where the answer goes;
	// Loopback says it goes to a program on this computer.
	Client, ReturnHost string
	Loopback           bool
	// PublishedAt is the host that published the client's metadata
	// document, for a client whose client_id is that URL.
	PublishedAt string
	// Params are the request's parameters, carried by the form.
	Params [][2]string
	// Agents are the viewer's agents, on the account endpoint.
	Agents []*switchboard.Agent
	// formAction is the redirect origin the policy allows.
	formAction string
}

// consentTarget is what an authorization path is about.
type consentTarget struct {
	agent            *switchboard.Agent // nil: the account endpoint
	issuer, resource string
}

// ServeHTTP serves GET (the consent page) and POST (the decision).
func (p *ConsentPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.console.reloadCrossSite(w, r) {
		return
	}
	v := &consentView{Nonce: randomToken()[:22], Action: r.URL.Path}
	var q url.Values
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q = r.URL.Query()
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			p.problem(w, v, http.StatusBadRequest, "The form could not be read.")
			return
		}
		q = r.PostForm
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		p.problem(w, v, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	tg, ok := p.target(w, r, v, q.Get("resource"))
	if !ok {
		return
	}
	req, err := p.oauth.CheckRequest(r.Context(), q, tg.resource, p.console.clientKey(r))
	var pe *mcpauth.PageError
	var re *mcpauth.RedirectError
	switch {
	case errors.As(err, &pe):
		p.problem(w, v, cmp.Or(pe.Status, http.StatusBadRequest), pe.Message)
		return
	case errors.As(err, &re):
		redirect(w, r, re.URL(tg.issuer))
		return
	case err != nil:
		p.fail(w, v, err)
		return
	}
	v.formAction = mcpauth.RedirectOrigin(req.RedirectURI)
	p.decideOrShow(w, r, v, tg, req)
}

// target finds what the path is about and answers 404 itself when there
// is no served MCP endpoint there. An agent's MCP endpoint is at its
// address on the deployment or, when it has one, at its agent domain: the
// request's resource says which (an agent domain sends its authorization
// requests here with it), and the issuer is that address.
func (p *ConsentPage) target(w http.ResponseWriter, r *http.Request, v *consentView, resource string) (*consentTarget, bool) {
	base := strings.TrimRight(p.console.BaseURL(r), "/")
	handle, _ := authorizeHandle(r.URL.Path)
	if handle == "" {
		return &consentTarget{issuer: base, resource: base + "/mcp"}, true
	}
	agent, err := p.console.Agents.FindAgentByHandle(r.Context(), strings.ToLower(handle))
	if err != nil || agent.AccountDisabled || agent.MCPOff {
		p.problem(w, v, http.StatusNotFound, "This address has no MCP endpoint.")
		return nil, false
	}
	issuer := base + "/a/" + agent.Handle
	if agent.Domain != "" {
		if d := publicurl.DomainAt(base, agent.Domain); strings.TrimRight(resource, "/") == d+"/mcp" {
			issuer = d
		}
	}
	return &consentTarget{agent: agent, issuer: issuer, resource: issuer + "/mcp"}, true
}

// decideOrShow sends a visitor who is not signed in to sign in, refuses
// one who does not own the target, and shows the page (GET) or applies
// the decision (POST).
func (p *ConsentPage) decideOrShow(w http.ResponseWriter, r *http.Request, v *consentView, tg *consentTarget, req *mcpauth.Request) {
	viewer, err := p.console.viewerOf(r)
	if err != nil {
		p.fail(w, v, err)
		return
	}
	if viewer == nil {
		if r.Method == http.MethodPost {
			p.problem(w, v, http.StatusForbidden, "Your sign-in has ended. Sign in to the console and start again from the application.")
			return
		}
		http.Redirect(w, r, "/dashboard?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	if tg.agent != nil && viewer.account.ID != tg.agent.AccountID && !viewer.account.IsOperator() {
		p.problem(w, v, http.StatusForbidden, "Only the agent's owner may let an application use its MCP endpoint.")
		return
	}
	if tg.agent == nil {
		acct := viewer.account.ID
		agents, err := p.console.Agents.FindAgents(r.Context(), switchboard.AgentFilter{AccountID: &acct})
		if err != nil {
			p.fail(w, v, err)
			return
		}
		v.Agents = agents
	}
	if r.Method == http.MethodPost {
		p.decide(w, r, v, tg, req)
		return
	}
	v.CSRF = p.csrfCookie(w, r)
	p.show(w, v, tg, req)
}

// show renders the consent form.
func (p *ConsentPage) show(w http.ResponseWriter, v *consentView, tg *consentTarget, req *mcpauth.Request) {
	v.Target = "all the agents you choose below, through the account endpoint " + tg.resource
	if tg.agent != nil {
		v.Target = "the agent " + tg.agent.Handle + " (" + tg.resource + ")"
	}
	v.Client, v.PublishedAt = req.Client.Name, req.DocumentHost
	if u, err := url.Parse(req.RedirectURI); err == nil {
		v.ReturnHost = u.Host
		v.Loopback = u.Scheme == "http"
	}
	for _, k := range consentParams {
		v.Params = append(v.Params, [2]string{k, paramOf(k, req)})
	}
	p.render(w, http.StatusOK, v)
}

// paramOf is the value the form carries for an authorization parameter:
// the checked one where the request was completed.
func paramOf(k string, req *mcpauth.Request) string {
	switch k {
	case "response_type":
		return "code"
	case "client_id":
		return req.Client.ID
	case "redirect_uri":
		return req.RedirectURI
	case "state":
		return req.State
	case "code_challenge":
		return req.Challenge
	case "code_challenge_method":
		return "S256"
	case "resource":
		return req.Resource
	}
	return mcpauth.Scope
}

// decide applies the owner's decision: deny sends access_denied back;
// approve issues a code and sends it back.
func (p *ConsentPage) decide(w http.ResponseWriter, r *http.Request, v *consentView, tg *consentTarget, req *mcpauth.Request) {
	ck, _ := r.Cookie(consentCookie)
	if !p.console.sameOrigin(r) || ck == nil || ck.Value == "" ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(ck.Value)) != 1 {
		p.problem(w, v, http.StatusForbidden, "This form expired or came from another site. Start again from the application.")
		return
	}
	switch r.PostFormValue("decision") {
	case "deny":
		p.record(r, tg, req, false, nil)
		redirect(w, r, mcpauth.Deny(req, tg.issuer))
		return
	case "approve":
	default:
		p.problem(w, v, http.StatusBadRequest, "Choose allow or deny.")
		return
	}
	var target switchboard.OAuthTarget
	if tg.agent != nil {
		target.AccountID, target.AgentID = tg.agent.AccountID, tg.agent.ID
	} else {
		for _, g := range v.Agents {
			if slices.Contains(r.PostForm["agent"], g.Handle) {
				target.AccountID = g.AccountID
				target.Agents = append(target.Agents, g.ID)
			}
		}
		if len(target.Agents) == 0 {
			p.problem(w, v, http.StatusBadRequest, "Choose at least one agent the application may act for.")
			return
		}
	}
	to, err := p.oauth.Approve(r.Context(), req, target, tg.issuer)
	p.record(r, tg, req, true, err)
	if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
		p.problem(w, v, http.StatusConflict, switchboard.ErrorMessage(err))
		return
	} else if err != nil {
		p.fail(w, v, err)
		return
	}
	redirect(w, r, to)
}

// redirect sends the user back to the client without a Referer.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, to, status)
}

// csrfCookie returns the page's CSRF token (Console.pageCSRF).
func (p *ConsentPage) csrfCookie(w http.ResponseWriter, r *http.Request) string {
	return p.console.pageCSRF(w, r, consentCookie)
}

// problem renders the page with a problem and no form.
func (p *ConsentPage) problem(w http.ResponseWriter, v *consentView, status int, msg string) {
	p.render(w, status, &consentView{Nonce: v.Nonce, Action: v.Action, Problem: msg})
}

// fail logs an unexpected error and says something went wrong.
func (p *ConsentPage) fail(w http.ResponseWriter, v *consentView, err error) {
	p.console.Logger.Error("the consent page", "err", err)
	p.problem(w, v, http.StatusInternalServerError, "Something went wrong; try again.")
}

// render writes the page with its headers: rendered in full first.
func (p *ConsentPage) render(w http.ResponseWriter, status int, v *consentView) {
	var buf bytes.Buffer
	if err := p.tmpl.Execute(&buf, v); err != nil {
		p.console.Logger.Error("render the consent page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	actions := "'self'"
	if originRE.MatchString(v.formAction) {
		actions += " " + v.formAction
	}
	writeStandalonePage(w, status, fmt.Sprintf(consentPolicy, v.Nonce, actions), buf.Bytes())
}

// record records the signed-in owner's answer to an MCP client: allowed
// (with the outcome of issuing its code) or denied.
func (p *ConsentPage) record(r *http.Request, tg *consentTarget, req *mcpauth.Request, allowed bool, err error) {
	acct := p.console.viewerAccount(r)
	t := audit.Target{Kind: audit.KindClient, ID: req.Client.ID, Detail: "denied"}
	if acct != nil {
		t.AccountID = acct.ID
	}
	if tg.agent != nil {
		t.AccountID = tg.agent.AccountID
	}
	if allowed {
		t.Detail = "allowed"
	}
	if tg.agent != nil {
		t.Detail += ", agent " + tg.agent.Handle
	} else {
		t.Detail += ", agents " + strings.Join(r.PostForm["agent"], ", ")
	}
	if req.Client.Name != "" {
		t.Detail += ", client " + req.Client.Name
	}
	p.console.record(r, acct, switchboard.AuditMCPConsent, t, err)
}
