package connector

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/connproto"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// dialTimeout bounds the TCP, TLS and WebSocket handshakes.
const dialTimeout = 15 * time.Second

// connectURL returns the WebSocket URL of a deployment's base URL:
// {base}/connect with ws or wss.
func connectURL(base string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("connector: %q is not a server URL", base)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return "", fmt.Errorf("connector: %q: the scheme must be http, https, ws or wss", base)
	}
	if !strings.HasSuffix(u.Path, "/connect") {
		u.Path = strings.TrimRight(u.Path, "/") + "/connect"
	}
	u.RawPath = ""
	return u.String(), nil
}

// dial opens a WebSocket to the server. On failure it returns how the
// attempt ended: a refusal that will not change (401, 403, 409) is
// terminal.
func (c *Client) dial(ctx context.Context, hc *http.Client, base string, heard *connproto.LastHeard) (*websocket.Conn, *corkConn, *sessionEnd) {
	u, err := connectURL(base)
	if err != nil {
		return nil, nil, &sessionEnd{err: err, code: -1, terminal: err}
	}
	dialed := new(atomic.Pointer[corkConn]) // set by the dialer of a corking client (cork.go)
	dctx, cancel := context.WithTimeout(context.WithValue(ctx, dialedKey{}, dialed), dialTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPClient:     hc,
		HTTPHeader:     http.Header{"Authorization": {"Bearer " + c.Token}},
		Subprotocols:   []string{Subprotocol},
		OnPingReceived: heard.Ping,
	})
	if err != nil {
		return nil, nil, refused(resp, err)
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.CloseNow()
		err := fmt.Errorf("the server did not accept the subprotocol %s: is %s a Switchboard server?", Subprotocol, base)
		return nil, nil, &sessionEnd{err: err, code: -1}
	}
	ws.SetReadLimit(readLimit)
	cork := dialed.Load()
	if !cork.carries() {
		cork = nil // the handshake went on another connection: writes are not corked, and their context bounds them
	}
	return ws, cork, nil
}

// refused classifies a failed handshake.
func refused(resp *http.Response, err error) *sessionEnd {
	end := &sessionEnd{err: err, code: -1}
	if resp == nil {
		return end
	}
	msg := responseText(resp)
	end.err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	var sentinel error
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		sentinel = ErrUnauthorized
	case http.StatusForbidden:
		sentinel = ErrAgentGone
	case http.StatusConflict:
		sentinel = ErrNotConnector
	case http.StatusServiceUnavailable:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			end.retryAfter = time.Duration(s) * time.Second
		}
	}
	if sentinel != nil {
		end.terminal = fmt.Errorf("%w (HTTP %d: %s)", sentinel, resp.StatusCode, msg)
	}
	return end
}

// responseText returns the start of a refusal's body, on one line.
func responseText(resp *http.Response) string {
	if resp.Body == nil {
		return resp.Status
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_ = resp.Body.Close()
	text := strings.Join(strings.Fields(string(b)), " ")
	if text == "" {
		return resp.Status
	}
	return text
}

// closeTerminal returns the error that stops the client after the server
// closed the connection with code, or nil if the client should reconnect.
func closeTerminal(code websocket.StatusCode, reason string) error {
	switch code {
	case connproto.CloseUnauthorized:
		return fmt.Errorf("%w (closed with %d: %s)", ErrUnauthorized, code, reason)
	case connproto.CloseGone:
		return fmt.Errorf("%w (closed with %d: %s)", ErrAgentGone, code, reason)
	}
	return nil
}

// errNoPong ends a connection whose server did not answer a ping in time.
var errNoPong = errors.New("the server did not answer a ping in time")
