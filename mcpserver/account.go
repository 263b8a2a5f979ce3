package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
)

// actingKey carries, on the account endpoint, the target a tool call acts
// for: the agent its agent argument named.
type actingKey struct{}

// addTool registers a tool on the agent endpoint as it is, and on the
// account endpoint with an agent argument (required): the handle or id of
// one of the agents the account token acts for.
func addTool[In any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Errorf("mcpserver: schema of %s: %w", t.Name, err))
	}
	st := *t
	st.InputSchema = encodedSchema(t.Name, schema)
	mcp.AddTool(s.sdk, &st, h)
	if schema.Properties == nil {
		schema.Properties = make(map[string]*jsonschema.Schema)
	}
	schema.Properties["agent"] = &jsonschema.Schema{Type: "string",
		Description: "the agent to act for: the handle of one of the agents this token acts for"}
	schema.Required = append([]string{"agent"}, schema.Required...)
	at := *t
	at.InputSchema = encodedSchema(t.Name, schema)
	s.acct.AddTool(&at, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Agent string `json:"agent"`
		}
		raw := req.Params.Arguments
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		var in In
		if err := json.Unmarshal(raw, &args); err != nil {
			return failed(toolFailure("invalid arguments: " + err.Error())), nil
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return failed(toolFailure("invalid arguments: " + err.Error())), nil
		}
		tg, err := s.actFor(ctx, req, args.Agent)
		if err != nil {
			return failed(toolFailure(switchboard.ErrorMessage(err))), nil
		}
		res, _, err := h(context.WithValue(ctx, actingKey{}, tg), req, in)
		if err != nil {
			return failed(err), nil
		}
		return res, nil
	})
}

// encodedSchema returns a tool's input schema encoded. The SDK encodes a
// tool's schema again on every call (it looks for parameters carried in
// headers), which for a *jsonschema.Schema costs more than the inbox's
// query; encoded, it costs a copy. The SDK still validates the arguments
// against the schema (it decodes it once, when the tool is added).
func encodedSchema(tool string, schema *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Errorf("mcpserver: encode the schema of %s: %w", tool, err))
	}
	return b
}

// failed is a tool's failure as the account endpoint answers it.
func failed(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// accountToken returns the account MCP token of the call and its target.
func accountToken(req *mcp.CallToolRequest) (*switchboard.Token, *target, error) {
	var info *auth.TokenInfo
	if req != nil && req.Extra != nil {
		info = req.Extra.TokenInfo
	}
	if info == nil {
		return nil, nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "no MCP token")
	}
	tok, _ := info.Extra[extraToken].(*switchboard.Token)
	tg, _ := info.Extra[extraTarget].(*target)
	if tok == nil || tg == nil {
		return nil, nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "no MCP token")
	}
	return tok, tg, nil
}

// actFor returns the target of a call on the account endpoint: the agent
// named (by handle or id), if the token acts for it. Any other agent is
// not found, exactly like a missing one.
func (s *Server) actFor(ctx context.Context, req *mcp.CallToolRequest, ref string) (*target, error) {
	tok, tg, err := accountToken(req)
	if err != nil {
		return nil, err
	}
	if ref == "" {
		return nil, errInvalid("agent is required: the handle of one of the agents this token acts for")
	}
	notFound := switchboard.Errorf(switchboard.ENOTFOUND, "this token does not act for an agent %q", ref)
	// The token's own copy may predate create_agent: read it again.
	if fresh, err := s.Tokens.FindTokenByHash(switchboard.FreshRead(ctx), tok.Hash); err == nil {
		tok = fresh
	}
	var g *switchboard.Agent
	if switchboard.IsUUID(ref) {
		g, err = s.Agents.FindAgentByID(ctx, strings.ToLower(ref))
	} else {
		g, err = s.Agents.FindAgentByHandle(ctx, strings.ToLower(ref))
	}
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return nil, notFound
	case err != nil:
		return nil, err
	case !tok.MayActFor(g.ID) || g.AccountID != tok.AccountID || g.AccountDisabled || g.MCPOff:
		return nil, notFound
	}
	return &target{agent: g, base: tg.base}, nil
}

// CreateAgentArgs are the arguments of create_agent.
type CreateAgentArgs struct {
	Handle      string `json:"handle" jsonschema:"the new agent's handle (a DNS label): its address is {base}/a/{handle}"`
	Name        string `json:"name,omitempty" jsonschema:"its display name (default: the handle)"`
	Description string `json:"description,omitempty" jsonschema:"what it does, shown on its card"`
}

// CreatedAgent is the result of create_agent.
type CreatedAgent struct {
	Handle   string `json:"handle"`
	Address  string `json:"address"`
	Mode     string `json:"mode"`
	Approved bool   `json:"approved"`
}

func (s *Server) createAgent(ctx context.Context, req *mcp.CallToolRequest, in CreateAgentArgs) (*mcp.CallToolResult, any, error) {
	tok, tg, err := accountToken(req)
	if err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	if fresh, err := s.Tokens.FindTokenByHash(switchboard.FreshRead(ctx), tok.Hash); err == nil {
		tok = fresh
	}
	if tok.CreatedAgent != "" {
		return s.fail(ctx, ToolCreateAgent, switchboard.Errorf(switchboard.ECONFLICT, "this token created an agent already; it creates one at most"))
	}
	handle, err := switchboard.NormalizeHandle(in.Handle)
	if err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	if len(in.Description) > switchboard.MaxDescriptionLen {
		return s.fail(ctx, ToolCreateAgent, errInvalid("description is longer than %d characters", switchboard.MaxDescriptionLen))
	}
	if err := switchboard.CheckDescription("description", in.Description); err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	acct, err := s.Accounts.FindAccountByID(ctx, tok.AccountID)
	if err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = handle
	}
	if len(name) > switchboard.MaxNameLen {
		return s.fail(ctx, ToolCreateAgent, errInvalid("name is longer than %d characters", switchboard.MaxNameLen))
	}
	if err := switchboard.CheckName("name", name); err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: name, Description: in.Description,
		Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Approved: s.Network == nil || s.Network.ApprovedAtCreation(acct)}
	err = s.Agents.CreateAgent(ctx, g)
	s.recordCreate(ctx, tok, g, err)
	if err != nil {
		return s.fail(ctx, ToolCreateAgent, err)
	}
	if err := s.Tokens.RecordCreatedAgent(ctx, tok.Hash, g.ID); err != nil {
		// Another call of the same token won: this agent goes.
		_ = s.Agents.DeleteAgent(ctx, g.ID)
		return s.fail(ctx, ToolCreateAgent, err)
	}
	out := CreatedAgent{Handle: g.Handle, Address: tg.base + "/a/" + g.Handle, Mode: string(g.Mode), Approved: g.Approved}
	return result(fmt.Sprintf("Created the inbox agent %s; this token acts for it now (pass \"agent\": %q).", g.Handle, g.Handle), out)
}
