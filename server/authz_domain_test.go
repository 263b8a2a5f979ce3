package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2abind"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestAuthorizationMatrixOnAgentDomain presents every credential to every
// route of the route table on an agent domain (each estate's agent holds
// {name}.agents.test). A route the domain serves (a2abind.DomainRoutes:
// the route's path is what a domain path is served as) answers there
// exactly what the matrix expects at the agent's address, a disabled
// account's domain included; every other route is 404 for every
// credential: no owner API, network API, connector endpoint, community,
// health check or other agent on an agent domain. A row whose own path is
// a domain path (the default agent's, the account MCP endpoint) is what
// the domain serves as its agent's, covered by that agent's row.
func TestAuthorizationMatrixOnAgentDomain(t *testing.T) {
	rows := authzRows()
	s := newAuthzServer(t, "", facetest.WithConfig(func(c *httpapi.Config) { c.PublicURL = facetest.DeploymentURL }))
	served := map[string]string{} // a route's path pattern → the domain path served as it
	own := map[string]bool{}      // the domain paths served as the agent's
	var ownPrefixes []string      // the domain path prefixes served as the agent's ({rest...})
	for _, dr := range a2abind.DomainRoutes() {
		if dr.Serves != "" {
			served[dr.Serves], own[dr.Path] = dr.Path, true
		}
		if p, ok := strings.CutSuffix(dr.Path, "{rest...}"); ok {
			ownPrefixes = append(ownPrefixes, p)
		}
	}
	ownPath := func(path string) bool {
		return own[path] || slices.ContainsFunc(ownPrefixes, func(p string) bool { return strings.HasPrefix(path, p) })
	}
	withDomain := func(e *estate) *estate {
		d := e.name + ".agents.test"
		_, err := s.DB.UpdateAgent(context.Background(), e.agent.ID, switchboard.AgentUpdate{Domain: &d})
		facetest.Must(t, err)
		e.agent.Domain = d
		return e
	}
	b, d := withDomain(s.estate("b", false)), withDomain(s.estate("d", true))
	estates := make(map[cred]*estate, len(creds))
	for i, c := range creds {
		estates[c] = withDomain(s.estate(fmt.Sprintf("a%d", i), false))
	}
	// onDomain returns the request at the domain of e's agent: its path
	// there, and whether the domain serves it as the route's.
	onDomain := func(e *estate, q authzReq) (authzReq, bool) {
		path, query, _ := strings.Cut(q.path, "?")
		pattern := strings.Replace(path, "/a/"+e.agent.Handle, "/a/{handle}", 1)
		for target, p := range served {
			if prefix, ok := strings.CutSuffix(target, "{rest...}"); ok && strings.HasPrefix(pattern, prefix) {
				q.path = strings.TrimSuffix(p, "{rest...}") + strings.TrimPrefix(pattern, prefix)
				if query != "" {
					q.path += "?" + query
				}
				return q, true
			}
		}
		if p, ok := served[pattern]; ok {
			q.path = p
			if query != "" {
				q.path += "?" + query
			}
			return q, true
		}
		return q, false
	}
	patterns := map[string]bool{}
	for _, rt := range s.API.Routes() {
		patterns[rt.Pattern] = true
	}
	for target, p := range served {
		if !patterns[strings.Replace(target, "/a/{handle}/", "/a/{handle}/{$}", 1)] && !patterns[target] {
			t.Errorf("the agent domain path %s serves %s, which is no route", p, target)
		}
	}
	for _, rt := range s.API.Routes() {
		switch rt.Access {
		case httpapi.AccessPublic, httpapi.AccessPeer, httpapi.AccessPush, httpapi.AccessMCP:
		default:
			if p, ok := served[rt.Pattern]; ok {
				t.Errorf("the agent domain path %s serves %s, a route for %s credentials", p, rt, rt.Access)
			}
		}
		if rt.Pattern != "/" && !strings.HasPrefix(rt.Pattern, "/a/{handle}") && !strings.Contains(rt.Pattern, "/a/{handle}/mcp") {
			if p, ok := served[rt.Pattern]; ok {
				t.Errorf("the agent domain path %s serves %s, which is no path of an agent's address", p, rt)
			}
		}
	}
	for _, rt := range s.API.Routes() {
		key := rt.String()
		row, ok := rows[key]
		if !ok {
			t.Errorf("route %s has no row in the authorization matrix", key)
			continue
		}
		if path, _, _ := strings.Cut(row.req(b).path, "?"); ownPath(path) {
			continue // on a domain, this path is the agent's own (its HTTP+JSON binding's, say)
		}
		for _, c := range creds {
			a := estates[c]
			x := authzCase{route: key, cred: c, e: a, caller: map[cred]string{
				credOwner: a.acct.ID, credOwnerOther: b.acct.ID, credOperator: s.Operator.ID}[c]}
			if c.disabled() {
				x.e = d
			}
			q, serves := onDomain(x.e, row.req(x.e))
			want := http.StatusNotFound
			if serves {
				want = row.want[c]
			}
			auth := c.authorization(a, b, d, s.OwnerToken(s.Operator))
			r := s.sendOnDomain(x.e.agent.Domain, q, auth)
			if r.Status != want {
				t.Errorf("%s as %s on %s: %s %s answered %d, want %d: %.300s", key, c, x.e.agent.Domain, q.method, q.path, r.Status, want, r.Body)
				continue
			}
			if !c.entitled() {
				for _, m := range a.markers() {
					if bytes.Contains(r.Body, []byte(m)) {
						t.Errorf("%s as %s on the domain: the answer shows %q of A's: %.300s", key, c, m, r.Body)
					}
				}
			}
			switch {
			case r.Status >= 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") && r.JSON["error"] == nil:
				t.Errorf("%s as %s on the domain: an error answer without an error: %.300s", key, c, r.Body)
			case r.Status >= 200 && r.Status < 300 && row.check != nil:
				row.check(t, x, r)
			}
			if serves && row.rpc {
				checkRPC(t, x, r, func() *facetest.Response {
					g, _ := onDomain(x.e, row.req(x.e.ghostTask()))
					return s.sendOnDomain(x.e.agent.Domain, g, auth)
				})
			}
		}
	}
}

// sendOnDomain makes the request at the agent domain domain, through the
// listener, with the Authorization header auth (none if empty).
func (s *authzServer) sendOnDomain(domain string, q authzReq, auth string) *facetest.Response {
	s.T.Helper()
	hdr := map[string]string{}
	if q.body != "" {
		hdr["Content-Type"] = "application/json"
	}
	for k, v := range q.header {
		hdr[k] = v
	}
	if auth != "" {
		hdr["Authorization"] = auth
	}
	if q.ws {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := http.Header{}
		for k, v := range hdr {
			h.Set(k, v)
		}
		ws, resp, err := websocket.Dial(ctx, "ws://"+domain+q.path, &websocket.DialOptions{HTTPClient: s.HostClient(),
			HTTPHeader: h, Subprotocols: []string{connproto.Subprotocol}})
		if ws != nil {
			_ = ws.CloseNow()
		}
		if resp == nil {
			s.T.Fatalf("dial %s on %s: %v", q.path, domain, err)
		}
		r := &facetest.Response{Status: resp.StatusCode, Header: resp.Header}
		if resp.Body != nil {
			r.Body, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			_ = json.Unmarshal(r.Body, &r.JSON)
		}
		return r
	}
	return s.At(q.method, "http://"+domain+q.path, hdr, q.body)
}
