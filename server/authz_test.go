package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TestAuthorizationMatrix presents every credential (authz_world_test.go)
// to every route of the server's route table and checks the answer. The
// rows are keyed by route: a route without a row fails the test, so a new
// route cannot be added without saying who may call it.
//
// The path of each request names real objects: those of account A, which
// owns them, except for the disabled account's credentials, which are
// presented on that account's own objects. Where another owner's object is
// refused, the answer must be the one a missing object gets, byte for byte.
func TestAuthorizationMatrix(t *testing.T) {
	rows := authzRows()
	routes := newAuthzServer(t, "").API.Routes()
	seen := make(map[string]bool)
	for _, rt := range routes {
		key := rt.String()
		seen[key] = true
		row, ok := rows[key]
		switch {
		case !ok:
			t.Errorf("route %s (access %s) has no row in the authorization matrix: add its expectations to authzRows", key, rt.Access)
			continue
		case row.access != rt.Access:
			t.Errorf("route %s declares access %q; the matrix expects %q", key, rt.Access, row.access)
		case len(row.want) != len(creds):
			t.Errorf("route %s: the matrix gives %d of the %d credentials an answer", key, len(row.want), len(creds))
			continue
		}
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			runAuthzRow(t, key, row)
		})
	}
	for key := range rows {
		if !seen[key] {
			t.Errorf("the authorization matrix has a row for %s, which is no route", key)
		}
	}
}

// authzRow is what the matrix expects of one route.
type authzRow struct {
	access httpapi.Access // what the route table must declare
	// req is the request, its path filled from the estate.
	req  func(e *estate) authzReq
	want want
	// root marks a route of the default agent: the owning account's agent
	// is the default agent, and its estate is shared by every credential
	// (the requests change nothing).
	root bool
	// rpc marks an A2A JSON-RPC call asking for the task of A's peer: a
	// refused token gets -31401; another peer of the agent gets -32001,
	// exactly as for a missing task; the task's peer gets the task.
	rpc bool
	// rest marks an HTTP+JSON call asking for the task of A's peer: a
	// refused token gets 401; another peer of the agent gets 404, exactly
	// as for a missing task; the task's peer gets the task.
	rest bool
	// check looks at an answer with a 2xx status.
	check func(t *testing.T, x authzCase, r *facetest.Response)
}

// authzCase is one credential on one route.
type authzCase struct {
	route  string
	cred   cred
	e      *estate // the estate that filled the path
	caller string  // the account of an owner credential
}

// want is the HTTP status the matrix expects for each credential.
type want map[cred]int

// every returns a want with every credential at status.
func every(status int) want {
	w := make(want, len(creds))
	for _, c := range creds {
		w[c] = status
	}
	return w
}

// and sets the given credentials to status.
func (w want) and(status int, cs ...cred) want {
	for _, c := range cs {
		w[c] = status
	}
	return w
}

var disabledCreds = []cred{credOwnerDisabled, credPeerDisabled, credAgentDisabled}

// ownerOf: an owner-API route on an object of A's. Another owner is told
// it does not exist; a disabled account is refused.
func ownerOf(ok int) want {
	return every(http.StatusUnauthorized).and(http.StatusNotFound, credOwnerOther).
		and(ok, credOwner, credOperator).and(http.StatusForbidden, credOwnerDisabled)
}

// anyOwner: an owner-API route on the caller's own account.
func anyOwner(ok int) want {
	return every(http.StatusUnauthorized).and(ok, credOwnerOther, credOwner, credOperator).and(http.StatusForbidden, credOwnerDisabled)
}

// operatorOnly: an operator route; owners are refused.
func operatorOnly(ok int) want {
	return every(http.StatusUnauthorized).and(http.StatusForbidden, credOwnerOther, credOwner, credOwnerDisabled).and(ok, credOperator)
}

// addressPage: a public page of A's agent; a disabled account's agents are
// gone.
func addressPage(ok int) want { return every(ok).and(http.StatusNotFound, disabledCreds...) }

// decision: a pairing decision on A's agent, whose pairing mode is human:
// its owner and the operator decide; the agent's own token is refused;
// another owner or agent is told the agent does not exist.
func decision() want {
	return ownerOf(http.StatusOK).and(http.StatusForbidden, credAgent, credAgentDisabled).and(http.StatusNotFound, credAgentOther)
}

// peerCall: A2A JSON-RPC at A's agent's address, answered with HTTP 200
// (result or JSON-RPC error) for its peers only.
func peerCall() want {
	return every(http.StatusUnauthorized).and(http.StatusOK, credPeerSibling, credPeer).and(http.StatusNotFound, disabledCreds...)
}

// authzRows returns the matrix: what each route answers each credential,
// keyed by the route as Route.String spells it.
func authzRows() map[string]authzRow {
	getTask := func(path string) func(e *estate) authzReq {
		return func(e *estate) authzReq {
			body := `{"jsonrpc":"2.0","id":"req-1","method":"GetTask","params":{"id":"` + string(e.task) + `"}}`
			return authzReq{method: "POST", path: strings.ReplaceAll(path, "{handle}", e.agent.Handle), body: body,
				header: map[string]string{"A2A-Version": "1.0"}}
		}
	}
	landing := func(path string) func(e *estate) authzReq {
		return func(e *estate) authzReq {
			return authzReq{method: "GET", path: strings.ReplaceAll(path, "{handle}", e.agent.Handle)}
		}
	}
	preflight := func(path string) func(e *estate) authzReq {
		return func(e *estate) authzReq {
			return authzReq{method: "OPTIONS", path: strings.ReplaceAll(path, "{handle}", e.agent.Handle)}
		}
	}
	showsHandle := func(t *testing.T, x authzCase, r *facetest.Response) {
		if r.JSON["handle"] != x.e.agent.Handle {
			t.Errorf("%s as %s: not the landing of %s: %s", x.route, x.cred, x.e.agent.Handle, r.Body)
		}
	}
	showsName := func(t *testing.T, x authzCase, r *facetest.Response) {
		if r.JSON["name"] != x.e.agent.Name {
			t.Errorf("%s as %s: not the card of %s: %s", x.route, x.cred, x.e.agent.Handle, r.Body)
		}
	}
	noBody := func(t *testing.T, x authzCase, r *facetest.Response) {}
	return map[string]authzRow{
		"GET /healthz": {access: httpapi.AccessPublic, want: every(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/healthz"} },
			check: field("ok", func(authzCase) any { return true })},
		"GET /readyz": {access: httpapi.AccessPublic, want: every(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/readyz"} },
			check: field("status", func(authzCase) any { return "ready" })},
		"GET /metrics": {access: httpapi.AccessPublic, want: every(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/metrics"} },
			check: contains(func(authzCase) string { return "switchboard_http_requests_total" })},
		// The agent token names the agent that connects: any valid one is
		// let in, a disabled account's is refused.
		"GET /connect": {access: httpapi.AccessAgent,
			want: every(http.StatusUnauthorized).and(http.StatusSwitchingProtocols, credAgent, credAgentOther).
				and(http.StatusForbidden, credAgentDisabled),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/connect", ws: true} },
			check: noBody},

		"GET /a/{handle}":      {access: httpapi.AccessPublic, want: addressPage(http.StatusOK), req: landing("/a/{handle}"), check: showsHandle},
		"POST /a/{handle}":     {access: httpapi.AccessPeer, want: peerCall(), rpc: true, req: getTask("/a/{handle}")},
		"/a/{handle}":          {access: httpapi.AccessPublic, want: addressPage(http.StatusNoContent), req: preflight("/a/{handle}"), check: noBody},
		"GET /a/{handle}/{$}":  {access: httpapi.AccessPublic, want: addressPage(http.StatusOK), req: landing("/a/{handle}/"), check: showsHandle},
		"POST /a/{handle}/{$}": {access: httpapi.AccessPeer, want: peerCall(), rpc: true, req: getTask("/a/{handle}/")},
		"/a/{handle}/{$}":      {access: httpapi.AccessPublic, want: addressPage(http.StatusNoContent), req: preflight("/a/{handle}/"), check: noBody},
		// The HTTP+JSON binding under the address: its peers only, each
		// seeing only its own tasks.
		"/a/{handle}/tasks/{rest...}": {access: httpapi.AccessPeer, want: restTaskCall(), rest: true, req: restGetTask("/a/{handle}/tasks/")},
		"/a/{handle}/v1/{rest...}":    {access: httpapi.AccessPeer, want: restTaskCall(), rest: true, req: restGetTask("/a/{handle}/v1/tasks/")},
		"/a/{handle}/tasks": {access: httpapi.AccessPeer, want: peerCall(), req: restAt("GET", "/a/{handle}/tasks", ""),
			check: listsOwnTask},
		"/a/{handle}/message:send": {access: httpapi.AccessPeer, want: peerCall(), req: restSend("/a/{handle}/message:send"),
			check: hasKey("task")},
		// A stream without a message: the refusal travels in the stream.
		"/a/{handle}/message:stream": {access: httpapi.AccessPeer, want: peerCall(), req: restAt("POST", "/a/{handle}/message:stream", "{}"),
			check: contains(func(authzCase) string { return "message is required" })},
		"/a/{handle}/extendedAgentCard": {access: httpapi.AccessPeer, req: restAt("GET", "/a/{handle}/extendedAgentCard", ""),
			want: every(http.StatusUnauthorized).and(http.StatusBadRequest, credPeerSibling, credPeer).and(http.StatusNotFound, disabledCreds...)},
		"/a/{handle}/.well-known/agent-card.json": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/a/{handle}/.well-known/agent-card.json"), check: showsName},
		"/a/{handle}/.well-known/agent.json": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/a/{handle}/.well-known/agent.json"), check: showsName},
		// Only the push token of an outbound record of the agent, about
		// that record's task.
		"POST /a/{handle}/push": {access: httpapi.AccessPush,
			want: every(http.StatusUnauthorized).and(http.StatusOK, credPush).and(http.StatusNotFound, disabledCreds...),
			req: func(e *estate) authzReq {
				body := `{"statusUpdate":{"taskId":"` + e.remote + `","contextId":"` + e.contextID + `","status":{"state":"TASK_STATE_WORKING"}}}`
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/push", body: body}
			},
			check: field("ok", func(authzCase) any { return true })},

		// Pairing: anyone may ask and poll (a made-up device code is an
		// OAuth invalid_grant); the metadata is public.
		"POST /a/{handle}/oauth/device_authorization": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/oauth/device_authorization", body: `{"client_name":"Barry"}`}
			},
			check: field("interval", func(authzCase) any { return 5.0 })},
		"POST /a/{handle}/oauth/token": {access: httpapi.AccessPublic, want: addressPage(http.StatusBadRequest),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/oauth/token",
					body: `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"made-up"}`}
			}},
		"GET /a/{handle}/.well-known/oauth-authorization-server": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/a/{handle}/.well-known/oauth-authorization-server"), check: hasKey("device_authorization_endpoint")},
		"GET /a/{handle}/.well-known/oauth-protected-resource": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/a/{handle}/.well-known/oauth-protected-resource"), check: hasKey("authorization_servers")},
		"GET /.well-known/oauth-authorization-server/a/{handle}": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/.well-known/oauth-authorization-server/a/{handle}"), check: hasKey("device_authorization_endpoint")},
		"GET /.well-known/oauth-protected-resource/a/{handle}": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/.well-known/oauth-protected-resource/a/{handle}"), check: hasKey("authorization_servers")},
		"POST /oauth/device_authorization": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: func(*estate) authzReq {
				return authzReq{method: "POST", path: "/oauth/device_authorization", body: `{"client_name":"Barry"}`}
			},
			check: field("interval", func(authzCase) any { return 5.0 })},
		"POST /oauth/token": {access: httpapi.AccessPublic, root: true, want: every(http.StatusBadRequest),
			req: func(*estate) authzReq {
				return authzReq{method: "POST", path: "/oauth/token",
					body: `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"made-up"}`}
			}},
		"GET /.well-known/oauth-authorization-server": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: landing("/.well-known/oauth-authorization-server"), check: hasKey("device_authorization_endpoint")},
		"GET /.well-known/oauth-protected-resource": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: landing("/.well-known/oauth-protected-resource"), check: hasKey("authorization_servers")},

		// The default agent at the root is A's agent.
		"GET /{$}": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK), req: landing("/"), check: showsHandle},
		"POST /{$}": {access: httpapi.AccessPeer, root: true, rpc: true, req: getTask("/"),
			want: every(http.StatusUnauthorized).and(http.StatusOK, credPeerSibling, credPeer)},
		"/{$}": {access: httpapi.AccessPublic, root: true, want: every(http.StatusNoContent), req: preflight("/"), check: noBody},
		"/.well-known/agent-card.json": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: landing("/.well-known/agent-card.json"), check: showsName},
		"/.well-known/agent.json": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: landing("/.well-known/agent.json"), check: showsName},

		"GET /account": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/account"} },
			check: field("id", func(x authzCase) any { return x.caller })},
		"GET /audit": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req: func(*estate) authzReq { return authzReq{method: "GET", path: "/audit"} },
			check: func(t *testing.T, x authzCase, r *facetest.Response) {
				var p ownerapi.AuditPage
				if err := json.Unmarshal(r.Body, &p); err != nil {
					t.Fatalf("%s as %s: %v: %s", x.route, x.cred, err, r.Body)
				}
				for _, e := range p.Entries {
					if x.cred != credOperator && e.AccountID != x.caller {
						t.Errorf("%s as %s: an entry of account %s: %+v", x.route, x.cred, e.AccountID, e)
					}
				}
			}},
		"POST /account/rotate": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "POST", path: "/account/rotate"} },
			check: field("id", func(x authzCase) any { return x.caller })},
		"POST /accounts": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/accounts", body: `{"name":"new-` + e.name + `"}`}
			},
			check: field("name", func(x authzCase) any { return "new-" + x.e.name })},
		"GET /accounts": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req:   func(*estate) authzReq { return authzReq{method: "GET", path: "/accounts"} },
			check: contains(func(x authzCase) string { return x.e.acct.ID })},
		"GET /accounts/{id}": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/accounts/" + e.acct.ID} },
			check: field("id", func(x authzCase) any { return x.e.acct.ID })},
		"PATCH /accounts/{id}": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "PATCH", path: "/accounts/" + e.acct.ID, body: `{"name":"renamed-` + e.name + `"}`}
			},
			check: field("name", func(x authzCase) any { return "renamed-" + x.e.name })},
		"POST /accounts/{id}/rotate": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "POST", path: "/accounts/" + e.acct.ID + "/rotate"} },
			check: field("id", func(x authzCase) any { return x.e.acct.ID })},

		// An agent for A: only A and the operator may create one.
		"POST /agents": {access: httpapi.AccessOwner,
			want: every(http.StatusUnauthorized).and(http.StatusCreated, credOwner, credOperator).
				and(http.StatusForbidden, credOwnerOther, credOwnerDisabled),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents",
					body: `{"handle":"new-` + e.name + `","mode":"inbox","account_id":"` + e.acct.ID + `"}`}
			},
			check: field("account_id", func(x authzCase) any { return x.e.acct.ID })},
		// A's agents: only the operator may ask for another account's.
		"GET /agents": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req: func(e *estate) authzReq { return authzReq{method: "GET", path: "/agents?account=" + e.acct.ID} },
			check: func(t *testing.T, x authzCase, r *facetest.Response) {
				if x.cred.entitled() && !bytes.Contains(r.Body, []byte(x.e.agent.ID)) {
					t.Errorf("%s as %s: A's agent is not listed: %s", x.route, x.cred, r.Body)
				}
			}},
		"GET /agents/{ref}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/agents/" + e.agent.ID} },
			check: field("id", func(x authzCase) any { return x.e.agent.ID })},
		"PATCH /agents/{ref}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "PATCH", path: "/agents/" + e.agent.Handle, body: `{"description":"updated"}`}
			},
			check: field("description", func(authzCase) any { return "updated" })},
		"DELETE /agents/{ref}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "DELETE", path: "/agents/" + e.agent.Handle} },
			check: field("id", func(x authzCase) any { return x.e.agent.ID })},
		"POST /agents/{ref}/tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/tokens", body: `{"label":"fresh"}`}
			},
			check: field("label", func(authzCase) any { return "fresh" })},
		"GET /agents/{ref}/tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/tokens"}
			},
			check: contains(func(authzCase) string { return `"label":"sibling"` })},
		"DELETE /agents/{ref}/tokens/{label}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "DELETE", path: "/agents/" + e.agent.Handle + "/tokens/" + e.spare}
			},
			check: field("revoked", func(authzCase) any { return true })},
		"POST /agents/{ref}/mcp-tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/mcp-tokens", body: `{"label":"fresh"}`}
			},
			check: field("label", func(authzCase) any { return "fresh" })},
		"GET /agents/{ref}/mcp-tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/mcp-tokens"}
			},
			check: contains(func(authzCase) string { return `"label":"claude"` })},
		"GET /mcp-tokens": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req: func(*estate) authzReq { return authzReq{method: "GET", path: "/mcp-tokens"} },
			check: contains(func(x authzCase) string {
				if x.cred == credOwnerOther {
					return `"agent":"b"`
				}
				return `"agent":"` + x.e.agent.Handle + `"`
			})},
		"POST /mcp-tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/mcp-tokens", body: `{"label":"fresh","agents":["` + e.agent.Handle + `"]}`}
			},
			check: field("label", func(authzCase) any { return "fresh" })},
		// The account endpoint: only an account MCP token.
		"POST /mcp": {access: httpapi.AccessMCP, want: every(http.StatusUnauthorized).and(http.StatusOK, credMCPAccount),
			req: func(*estate) authzReq {
				return authzReq{method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
					header: map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}}
			},
			check: contains(func(authzCase) string { return `"name":"create_agent"` })},
		"/mcp": {access: httpapi.AccessPublic, want: every(http.StatusMethodNotAllowed),
			req: func(*estate) authzReq { return authzReq{method: "GET", path: "/mcp"} }},
		"DELETE /mcp-tokens/{id}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "DELETE", path: "/mcp-tokens/" + e.mcpID} },
			check: field("revoked", func(authzCase) any { return true })},
		// MCP: only an MCP token of the agent, on its own endpoint.
		"POST /a/{handle}/mcp": {access: httpapi.AccessMCP,
			want: every(http.StatusUnauthorized).and(http.StatusOK, credMCP).and(http.StatusNotFound, disabledCreds...),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/mcp",
					body:   `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
					header: map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}}
			},
			check: contains(func(authzCase) string { return `"name":"inbox"` })},
		// OAuth for MCP clients (docs/mcp.md): registration, revocation
		// and the endpoints' resource metadata are public.
		"POST /a/{handle}/oauth/register": {access: httpapi.AccessPublic, want: addressPage(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/oauth/register", body: `{"redirect_uris":["http://127.0.0.1/cb"]}`}
			},
			check: hasKey("client_id")},
		"POST /a/{handle}/oauth/revoke": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/a/" + e.agent.Handle + "/oauth/revoke", body: `{"token":"made-up"}`}
			},
			check: contains(func(authzCase) string { return "{}" })},
		"POST /oauth/register": {access: httpapi.AccessPublic, root: true, want: every(http.StatusCreated),
			req: func(*estate) authzReq {
				return authzReq{method: "POST", path: "/oauth/register", body: `{"redirect_uris":["https://app.example/cb"]}`}
			},
			check: hasKey("client_id")},
		"POST /oauth/revoke": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: func(*estate) authzReq {
				return authzReq{method: "POST", path: "/oauth/revoke", body: `{"token":"made-up"}`}
			},
			check: contains(func(authzCase) string { return "{}" })},
		"GET /.well-known/oauth-protected-resource/a/{handle}/mcp": {access: httpapi.AccessPublic, want: addressPage(http.StatusOK),
			req: landing("/.well-known/oauth-protected-resource/a/{handle}/mcp"), check: hasKey("authorization_servers")},
		"GET /.well-known/oauth-protected-resource/mcp": {access: httpapi.AccessPublic, root: true, want: every(http.StatusOK),
			req: landing("/.well-known/oauth-protected-resource/mcp"), check: hasKey("authorization_servers")},
		"/a/{handle}/mcp": {access: httpapi.AccessPublic,
			want: every(http.StatusMethodNotAllowed).and(http.StatusNotFound, disabledCreds...),
			req:  func(e *estate) authzReq { return authzReq{method: "GET", path: "/a/" + e.agent.Handle + "/mcp"} }},
		"GET /agents/{ref}/inbox": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/inbox"} },
			check: contains(func(x authzCase) string { return string(x.e.task) })},
		"POST /agents/{ref}/agent-token": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/agent-token"}
			},
			check: field("agent", func(x authzCase) any { return x.e.agent.Handle })},
		"POST /agents/{ref}/webhook-secret": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.webhook.Handle + "/webhook-secret"}
			},
			check: field("agent", func(x authzCase) any { return x.e.webhook.Handle })},
		"GET /agents/{ref}/deliveries": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/deliveries"}
			},
			check: contains(func(x authzCase) string { return string(x.e.task) })},
		"GET /agents/{ref}/reachability": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/reachability"}
			},
			check: field("agent", func(x authzCase) any { return x.e.agent.Handle })},
		"GET /agents/{ref}/wake": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/wake"} },
			check: field("agent", func(x authzCase) any { return x.e.agent.Handle })},
		"PUT /agents/{ref}/wake": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "PUT", path: "/agents/" + e.agent.Handle + "/wake", body: `{"debounce_seconds":5}`}
			},
			check: field("debounce_seconds", func(authzCase) any { return 5.0 })},
		"DELETE /agents/{ref}/wake": {access: httpapi.AccessOwner, want: ownerOf(http.StatusNoContent),
			req: func(e *estate) authzReq {
				return authzReq{method: "DELETE", path: "/agents/" + e.agent.Handle + "/wake"}
			},
			check: noBody},
		"POST /agents/{ref}/wake/test": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/wake/test"}
			},
			check: field("ok", func(authzCase) any { return true })},

		// Front routes on an agent that is not a front: its owner is told
		// so (400), anyone else finds no agent.
		"PUT /agents/{ref}/upstream-credentials": {access: httpapi.AccessOwner, want: ownerOf(http.StatusBadRequest),
			req: func(e *estate) authzReq {
				return authzReq{method: "PUT", path: "/agents/" + e.agent.Handle + "/upstream-credentials", body: `{"bearer":"x"}`}
			}},
		"GET /agents/{ref}/front": {access: httpapi.AccessOwner, want: ownerOf(http.StatusBadRequest),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/front"}
			}},
		"POST /agents/{ref}/front/verify": {access: httpapi.AccessOwner, want: ownerOf(http.StatusBadRequest),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/front/verify"}
			}},
		// The list: those who may decide (decision()).
		"GET /agents/{ref}/pairings": {access: httpapi.AccessOwnerOrAgent, want: decision(),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/pairings"}
			},
			check: contains(func(x authzCase) string { return x.e.userCode })},
		// A decision: the owner (the agent only in agent mode: A's is
		// human, so its token is refused).
		"POST /agents/{ref}/pairings/{code}/approve": {access: httpapi.AccessOwnerOrAgent, want: decision(),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/pairings/" + e.userCode + "/approve"}
			},
			check: field("status", func(authzCase) any { return "approved" })},
		"POST /agents/{ref}/pairings/{code}/deny": {access: httpapi.AccessOwnerOrAgent, want: decision(),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/pairings/" + e.userCode + "/deny"}
			},
			check: field("status", func(authzCase) any { return "denied" })},

		// Synced aliases: the token is never in an answer.
		"PUT /agents/{ref}/peers/{alias}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "PUT", path: "/agents/" + e.agent.Handle + "/peers/bob",
					body: `{"url":"https://bob.example/a/bob","token":"sbp_put-token"}`}
			},
			check: func(t *testing.T, x authzCase, r *facetest.Response) {
				if bytes.Contains(r.Body, []byte("sbp_put-token")) || r.JSON["has_token"] != true {
					t.Errorf("PUT alias answered %s", r.Body)
				}
			}},
		"GET /agents/{ref}/peers": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/peers"}
			},
			check: func(t *testing.T, x authzCase, r *facetest.Response) {
				if !bytes.Contains(r.Body, []byte(`"alias":"`+x.e.spare+`"`)) || bytes.Contains(r.Body, []byte("sbp_synced")) {
					t.Errorf("GET aliases answered %s", r.Body)
				}
			}},
		"DELETE /agents/{ref}/peers/{alias}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "DELETE", path: "/agents/" + e.agent.Handle + "/peers/" + e.spare}
			},
			check: field("deleted", func(authzCase) any { return true })},
		"POST /agents/{ref}/outbox": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/outbox",
					body: `{"target":"carol","endpoint":"https://carol.example/a2a","protocol":"1.0"}`}
			},
			check: field("agent_id", func(x authzCase) any { return x.e.agent.ID })},
		"GET /agents/{ref}/outbox": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/outbox"}
			},
			check: contains(func(x authzCase) string { return x.e.outbound })},
		"GET /agents/{ref}/history/{contextId}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/agents/" + e.agent.Handle + "/history/" + e.contextID}
			},
			check: contains(func(x authzCase) string { return string(x.e.task) })},
		"GET /outbox/{id}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/outbox/" + e.outbound} },
			check: field("id", func(x authzCase) any { return x.e.outbound })},
		"PATCH /outbox/{id}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "PATCH", path: "/outbox/" + e.outbound, body: `{"source":"send","error":"connection refused"}`}
			},
			check: field("error", func(authzCase) any { return "connection refused" })},

		// An owner sees its agents' tasks; an agent, the tasks it sent:
		// agentTask is A's agent's, on A's webhook agent.
		"GET /tasks/{id}": {access: httpapi.AccessOwnerOrAgent,
			want: ownerOf(http.StatusOK).and(http.StatusOK, credAgent).and(http.StatusNotFound, credAgentOther).
				and(http.StatusForbidden, credAgentDisabled),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/tasks/" + string(e.agentTask)} },
			check: field("id", func(x authzCase) any { return string(x.e.agentTask) })},
		"POST /tasks/{id}/reply": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/tasks/" + string(e.task) + "/reply", body: `{"text":"done"}`}
			},
			check: field("state", func(authzCase) any { return "completed" })},
		"GET /tasks/{id}/pushes": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "GET", path: "/tasks/" + string(e.task) + "/pushes"} },
			check: field("task_id", func(x authzCase) any { return string(x.e.task) })},

		// The network: only the operator approves; owners manage their
		// agents' communities and the tokens of communities they are in.
		"POST /agents/{ref}/approve": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req:   func(e *estate) authzReq { return authzReq{method: "POST", path: "/agents/" + e.agent.ID + "/approve"} },
			check: field("approved", func(authzCase) any { return true })},
		"POST /agents/{ref}/unapprove": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/agents/" + e.agent.Handle + "/unapprove"}
			},
			check: field("approved", func(authzCase) any { return false })},
		"PUT /agents/{ref}/communities/{name}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "PUT", path: "/agents/" + e.agent.Handle + "/communities/lab"}
			},
			check: contains(func(x authzCase) string { return `"communities":["co-` + x.e.name + `","lab"]` })},
		"DELETE /agents/{ref}/communities/{name}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "DELETE", path: "/agents/" + e.agent.Handle + "/communities/" + e.community}
			},
			check: contains(func(authzCase) string { return `"communities":[]` })},
		"GET /communities": {access: httpapi.AccessOwner, want: anyOwner(http.StatusOK),
			req: func(*estate) authzReq { return authzReq{method: "GET", path: "/communities"} },
			check: contains(func(x authzCase) string {
				if x.cred == credOwnerOther {
					return `"name":"co-b"`
				}
				return `"name":"` + x.e.community + `"`
			})},
		"PUT /communities/{name}": {access: httpapi.AccessOperator, want: operatorOnly(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "PUT", path: "/communities/" + e.community, body: `{"closed":true}`}
			},
			check: field("closed", func(authzCase) any { return true })},
		"POST /communities/{name}/tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusCreated),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/communities/" + e.community + "/tokens", body: `{"label":"dave"}`}
			},
			check: field("community", func(x authzCase) any { return x.e.community })},
		"GET /communities/{name}/tokens": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "GET", path: "/communities/" + e.community + "/tokens"}
			},
			check: contains(func(authzCase) string { return `"label":"carol"` })},
		"DELETE /communities/{name}/tokens/{label}": {access: httpapi.AccessOwner, want: ownerOf(http.StatusOK),
			req: func(e *estate) authzReq {
				return authzReq{method: "DELETE", path: "/communities/" + e.community + "/tokens/carol"}
			},
			check: field("revoked", func(authzCase) any { return true })},
		// Every owner and agent has a directory of its own communities.
		"GET /directory": {access: httpapi.AccessOwnerOrAgent,
			want: anyOwner(http.StatusOK).and(http.StatusOK, credAgent, credAgentOther).and(http.StatusForbidden, credAgentDisabled),
			req:  func(*estate) authzReq { return authzReq{method: "GET", path: "/directory"} },
			check: func(t *testing.T, x authzCase, r *facetest.Response) {
				hook := `"handle":"b-hook"`
				if x.cred != credOwnerOther && x.cred != credAgentOther {
					hook = `"handle":"` + x.e.webhook.Handle + `"`
				}
				if !bytes.Contains(r.Body, []byte(hook)) {
					t.Errorf("%s as %s: the directory lacks %s: %.300s", x.route, x.cred, hook, r.Body)
				}
			}},
		// An agent sends work to one that shares a community with it; its
		// owner (or the operator) may send as it, naming it.
		"POST /tasks": {access: httpapi.AccessOwnerOrAgent,
			want: ownerOf(http.StatusAccepted).and(http.StatusAccepted, credAgent).and(http.StatusNotFound, credAgentOther).
				and(http.StatusForbidden, credAgentDisabled),
			req: func(e *estate) authzReq {
				return authzReq{method: "POST", path: "/tasks", body: `{"agent":"` + e.agent.Handle + `","to":"` + e.webhook.Handle + `","payload":{"message":"hi"}}`}
			},
			check: field("agent", func(x authzCase) any { return x.e.webhook.Handle })},

		// A community's address: public pages; calls for its peers and
		// members (each sees only its own tasks).
		"GET /c/{name}":      {access: httpapi.AccessPublic, want: every(http.StatusOK), req: communityPage("", "GET"), check: communityName},
		"/c/{name}":          {access: httpapi.AccessPublic, want: every(http.StatusNoContent), req: communityPage("", "OPTIONS"), check: noBody},
		"GET /c/{name}/{$}":  {access: httpapi.AccessPublic, want: every(http.StatusOK), req: communityPage("/", "GET"), check: communityName},
		"/c/{name}/{$}":      {access: httpapi.AccessPublic, want: every(http.StatusNoContent), req: communityPage("/", "OPTIONS"), check: noBody},
		"POST /c/{name}":     {access: httpapi.AccessCommunity, want: communityCall(), req: communityGetTask(""), check: checkCommunityCall},
		"POST /c/{name}/{$}": {access: httpapi.AccessCommunity, want: communityCall(), req: communityGetTask("/"), check: checkCommunityCall},
		"/c/{name}/.well-known/agent-card.json": {access: httpapi.AccessPublic, want: every(http.StatusOK),
			req: communityPage("/.well-known/agent-card.json", "GET"), check: communityName},
		"/c/{name}/.well-known/agent.json": {access: httpapi.AccessPublic, want: every(http.StatusOK),
			req: communityPage("/.well-known/agent.json", "GET"), check: communityName},
		// The HTTP+JSON binding under the community's address.
		"/c/{name}/tasks/{rest...}": {access: httpapi.AccessCommunity, want: communityTaskCall(), req: communityREST("GET", "/tasks/{task}", ""),
			check: communityTask},
		"/c/{name}/v1/{rest...}": {access: httpapi.AccessCommunity, want: communityTaskCall(), req: communityREST("GET", "/v1/tasks/{task}", ""),
			check: communityTask},
		"/c/{name}/tasks": {access: httpapi.AccessCommunity, want: communityCall(), req: communityREST("GET", "/tasks", ""),
			check: hasKey("tasks")},
		"/c/{name}/message:send": {access: httpapi.AccessCommunity, req: communityREST("POST", "/message:send", "{}"),
			want: every(http.StatusUnauthorized).and(http.StatusBadRequest, credCommunity, credAgent)},
		"/c/{name}/message:stream": {access: httpapi.AccessCommunity, want: communityCall(), req: communityREST("POST", "/message:stream", "{}"),
			check: contains(func(authzCase) string { return "message is required" })},
		"/c/{name}/extendedAgentCard": {access: httpapi.AccessCommunity, req: communityREST("GET", "/extendedAgentCard", ""),
			want: every(http.StatusUnauthorized).and(http.StatusBadRequest, credCommunity, credAgent)},

		"/": {access: httpapi.AccessPublic, want: every(http.StatusNotFound),
			req: func(*estate) authzReq { return authzReq{method: "GET", path: "/nowhere"} }},
	}
}

// restTaskCall: an HTTP+JSON call for A's peer's task at A's agent's
// address: the peer gets it, another peer of the agent is told it does
// not exist.
func restTaskCall() want {
	return every(http.StatusUnauthorized).and(http.StatusOK, credPeer).and(http.StatusNotFound, credPeerSibling).
		and(http.StatusNotFound, disabledCreds...)
}

// restAt requests path (its {handle} the estate agent's) with the peer's
// JSON body, if any.
func restAt(method, path, body string) func(e *estate) authzReq {
	return func(e *estate) authzReq {
		q := authzReq{method: method, path: strings.ReplaceAll(path, "{handle}", e.agent.Handle), body: body}
		if body != "" {
			q.header = map[string]string{"Content-Type": "application/json"}
		}
		return q
	}
}

// restGetTask asks for the estate's task under prefix.
func restGetTask(prefix string) func(e *estate) authzReq {
	return func(e *estate) authzReq { return restAt("GET", prefix+string(e.task), "")(e) }
}

// restSend sends a new message that does not wait for the agent.
func restSend(path string) func(e *estate) authzReq {
	return func(e *estate) authzReq {
		return restAt("POST", path, `{"message":{"messageId":"m-rest-`+e.name+`","role":"ROLE_USER","parts":[{"text":"hi"}]},`+
			`"configuration":{"returnImmediately":true}}`)(e)
	}
}

// listsOwnTask: the peer's list holds its task; another peer's does not.
func listsOwnTask(t *testing.T, x authzCase, r *facetest.Response) {
	if has := bytes.Contains(r.Body, []byte(x.e.task)); has != (x.cred == credPeer) {
		t.Errorf("%s as %s: the list shows A's peer's task: %v: %.300s", x.route, x.cred, has, r.Body)
	}
}

// communityREST requests path under the estate's community's address,
// {task} its community task.
func communityREST(method, path, body string) func(e *estate) authzReq {
	return func(e *estate) authzReq {
		q := authzReq{method: method, path: "/c/" + e.community + strings.ReplaceAll(path, "{task}", string(e.communityTask)), body: body}
		if body != "" {
			q.header = map[string]string{"Content-Type": "application/json"}
		}
		return q
	}
}

// communityTaskCall: an HTTP+JSON call for the community peer's task at
// the community's address: the peer gets it; a member's agent token,
// which did not send it, is told it does not exist.
func communityTaskCall() want {
	return every(http.StatusUnauthorized).and(http.StatusOK, credCommunity).and(http.StatusNotFound, credAgent)
}

// communityTask checks that the answer is the community peer's task.
func communityTask(t *testing.T, x authzCase, r *facetest.Response) {
	if r.JSON["id"] != string(x.e.communityTask) {
		t.Errorf("%s as %s: not the task %s: %.300s", x.route, x.cred, x.e.communityTask, r.Body)
	}
}

// communityPage requests a page of the estate's community's address.
func communityPage(suffix, method string) func(e *estate) authzReq {
	return func(e *estate) authzReq { return authzReq{method: method, path: "/c/" + e.community + suffix} }
}

// communityGetTask asks the estate's community's address for the task its
// peer token sent.
func communityGetTask(suffix string) func(e *estate) authzReq {
	return func(e *estate) authzReq {
		body := `{"jsonrpc":"2.0","id":"req-1","method":"GetTask","params":{"id":"` + string(e.communityTask) + `"}}`
		return authzReq{method: "POST", path: "/c/" + e.community + suffix, body: body, header: map[string]string{"A2A-Version": "1.0"}}
	}
}

// communityCall: A2A JSON-RPC at A's community's address, for its peers
// and the agent tokens of its members (a disabled account's agent is no
// member that counts).
func communityCall() want {
	return every(http.StatusUnauthorized).and(http.StatusOK, credCommunity, credAgent)
}

// communityName checks that an answer is about the estate's community.
func communityName(t *testing.T, x authzCase, r *facetest.Response) {
	if want := "Community " + x.e.community; r.JSON["name"] != want {
		t.Errorf("%s as %s: not the page of %s: %.300s", x.route, x.cred, x.e.community, r.Body)
	}
}

// checkCommunityCall: the community's peer gets its task; a member's agent
// token, which did not send it, gets "task not found".
func checkCommunityCall(t *testing.T, x authzCase, r *facetest.Response) {
	switch x.cred {
	case credCommunity:
		if res := r.Result(t); res["id"] != string(x.e.communityTask) {
			t.Errorf("%s as %s: not the task %s: %.300s", x.route, x.cred, x.e.communityTask, r.Body)
		}
	default:
		if code := r.RPCErrorCode(); code != -32001 {
			t.Errorf("%s as %s: JSON-RPC error %d, want -32001: %.300s", x.route, x.cred, code, r.Body)
		}
	}
}

// field checks that a JSON answer's key holds the value v returns.
func field(key string, v func(authzCase) any) func(t *testing.T, x authzCase, r *facetest.Response) {
	return func(t *testing.T, x authzCase, r *facetest.Response) {
		if want := v(x); r.JSON[key] != want {
			t.Errorf("%s as %s: %q is %v, want %v: %.300s", x.route, x.cred, key, r.JSON[key], want, r.Body)
		}
	}
}

// hasKey checks that a JSON answer has the key.
func hasKey(key string) func(t *testing.T, x authzCase, r *facetest.Response) {
	return func(t *testing.T, x authzCase, r *facetest.Response) {
		if _, ok := r.JSON[key]; !ok {
			t.Errorf("%s as %s: the answer lacks %q: %.300s", x.route, x.cred, key, r.Body)
		}
	}
}

// contains checks that an answer holds the text s returns.
func contains(s func(authzCase) string) func(t *testing.T, x authzCase, r *facetest.Response) {
	return func(t *testing.T, x authzCase, r *facetest.Response) {
		if want := s(x); !bytes.Contains(r.Body, []byte(want)) {
			t.Errorf("%s as %s: the answer lacks %q: %.300s", x.route, x.cred, want, r.Body)
		}
	}
}

// runAuthzRow presents every credential to one route, each on a fresh
// estate of A (an allowed call may change or delete what it names), on a
// server of its own.
func runAuthzRow(t *testing.T, route string, row authzRow) {
	defaultAgent := ""
	if row.root {
		defaultAgent = "home"
	}
	s := newAuthzServer(t, defaultAgent)
	b, d := s.estate("b", false), s.estate("d", true)
	var shared *estate
	if row.root {
		shared = s.estate(defaultAgent, false)
	}
	for i, c := range creds {
		t.Run(string(c), func(t *testing.T) {
			a := shared
			if a == nil {
				a = s.estate(fmt.Sprintf("a%d", i), false)
			}
			operatorToken := s.OwnerToken(s.Operator) // an earlier call may have rotated it
			x := authzCase{route: route, cred: c, e: a, caller: map[cred]string{
				credOwner: a.acct.ID, credOwnerOther: b.acct.ID, credOperator: s.Operator.ID}[c]}
			if c.disabled() && !row.root { // root paths name no object: they stay A's
				x.e = d
			}
			auth := c.authorization(a, b, d, operatorToken)
			q := row.req(x.e)
			r := s.send(q, auth)
			if r.Status != row.want[c] {
				t.Fatalf("%s as %s: %s %s answered %d, want %d: %.300s", route, c, q.method, q.path, r.Status, row.want[c], r.Body)
			}
			if !c.entitled() {
				for _, m := range a.markers() {
					if bytes.Contains(r.Body, []byte(m)) {
						t.Errorf("%s as %s: the answer shows %q of A's: %.300s", route, c, m, r.Body)
					}
				}
			}
			if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s as %s: 401 without a WWW-Authenticate challenge", route, c)
			}
			switch {
			case r.Status >= 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") && r.JSON["error"] == nil:
				t.Errorf("%s as %s: an error answer without an error: %.300s", route, c, r.Body)
			case r.Status >= 200 && r.Status < 300 && !row.rpc && !row.rest && row.check == nil:
				t.Errorf("%s as %s: allowed, but the matrix has no check of the answer", route, c)
			case r.Status >= 200 && r.Status < 300 && row.check != nil:
				row.check(t, x, r)
			}
			// "Not yours" must read exactly as "not found", and a disabled
			// account's agent exactly as a missing one.
			if c == credOwnerOther && r.Status == http.StatusNotFound {
				sameAnswer(t, x, r, s.send(row.req(a.ghost()), auth))
			}
			if c.disabled() && r.Status == http.StatusNotFound {
				sameAnswer(t, x, r, s.send(row.req(d.ghost()), auth))
			}
			if row.rpc {
				checkRPC(t, x, r, func() *facetest.Response { return s.send(row.req(a.ghostTask()), auth) })
			}
			if row.rest {
				checkREST(t, x, r, func() *facetest.Response { return s.send(row.req(a.ghostTask()), auth) })
			}
		})
	}
}

// checkRPC checks the JSON-RPC answer of a call for A's peer's task.
func checkRPC(t *testing.T, x authzCase, r *facetest.Response, missing func() *facetest.Response) {
	t.Helper()
	switch {
	case r.Status == http.StatusUnauthorized:
		if code := r.RPCErrorCode(); code != -31401 {
			t.Errorf("%s as %s: JSON-RPC error %d, want -31401: %.300s", x.route, x.cred, code, r.Body)
		}
	case x.cred == credPeerSibling:
		if code := r.RPCErrorCode(); code != -32001 {
			t.Errorf("%s as %s: JSON-RPC error %d, want -32001 (task not found): %.300s", x.route, x.cred, code, r.Body)
		}
		sameAnswer(t, x, r, missing())
	case x.cred == credPeer:
		if res := r.Result(t); res["id"] != string(x.e.task) {
			t.Errorf("%s as %s: not the task %s: %.300s", x.route, x.cred, x.e.task, r.Body)
		}
	}
}

// checkREST checks the HTTP+JSON answer of a call for A's peer's task.
func checkREST(t *testing.T, x authzCase, r *facetest.Response, missing func() *facetest.Response) {
	t.Helper()
	switch {
	case r.Status == http.StatusUnauthorized:
		if facetest.Path(r.JSON, "error", "status") != "UNAUTHENTICATED" {
			t.Errorf("%s as %s: not the binding's 401: %.300s", x.route, x.cred, r.Body)
		}
	case x.cred == credPeerSibling:
		sameAnswer(t, x, r, missing())
	case x.cred == credPeer:
		if r.JSON["id"] != string(x.e.task) {
			t.Errorf("%s as %s: not the task %s: %.300s", x.route, x.cred, x.e.task, r.Body)
		}
	}
}

// sameAnswer checks that a refusal reads exactly as the answer about a
// missing object.
func sameAnswer(t *testing.T, x authzCase, refused, missing *facetest.Response) {
	t.Helper()
	if refused.Status != missing.Status || !bytes.Equal(refused.Body, missing.Body) {
		t.Errorf("%s as %s: another's object answers %d %s, a missing one %d %s", x.route, x.cred,
			refused.Status, refused.Body, missing.Status, missing.Body)
	}
}
