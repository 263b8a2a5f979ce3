package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
)

// result is a tool's answer: one text block a model reads (a header line,
// then the JSON indented) and the same JSON as structured content.
func result(header string, v any) (*mcp.CallToolResult, any, error) {
	text, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, toolFailure("encode the result: " + err.Error())
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: header + "\n" + string(text)}},
		StructuredContent: json.RawMessage(text),
	}, nil, nil
}

// structured is a tool's answer whose text is written for a model (not
// the JSON), with v as structured content.
func structured(text string, v any) (*mcp.CallToolResult, any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, toolFailure("encode the result: " + err.Error())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(data)}, nil, nil
}

// quote returns s quoted as a Go string, cut to at most n bytes (on a
// rune boundary, marked with …): peer text shown as data.
func quote(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

// fail turns a service's error into the tool's failure ("Error: …",
// isError): the caller-facing message of a switchboard.Error, a generic
// text (and a log line) for anything else.
func (s *Server) fail(ctx context.Context, tool string, err error) (*mcp.CallToolResult, any, error) {
	if switchboard.ErrorCode(err) == switchboard.EINTERNAL {
		s.Logger.ErrorContext(ctx, "mcp tool failed", "tool", tool, "err", err)
	}
	return nil, nil, toolFailure(switchboard.ErrorMessage(err))
}

// toolFailure is a tool's failure as a model reads it, the text of its
// isError result: "Error: " and what went wrong. The capital is meant (a
// line shown to a model, docs/mcp.md), so it is added here rather than
// written into each error string.
func toolFailure(msg string) error {
	return errors.New("Error: " + msg)
}

// errInvalid is a tool's refusal of its arguments.
func errInvalid(format string, args ...any) error {
	return switchboard.Errorf(switchboard.EINVALID, format, args...)
}

// targetOf returns what the call is about: the agent whose endpoint was
// called, as the token check found it.
func targetOf(ctx context.Context, req *mcp.CallToolRequest) (*target, error) {
	if tg, ok := ctx.Value(actingKey{}).(*target); ok {
		return tg, nil // the account endpoint: the agent the call named
	}
	var info *auth.TokenInfo
	if req != nil && req.Extra != nil {
		info = req.Extra.TokenInfo
	}
	if info == nil {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "no MCP token")
	}
	tg, _ := info.Extra[extraTarget].(*target)
	if tg == nil || tg.agent == nil {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "no MCP token")
	}
	return tg, nil
}
