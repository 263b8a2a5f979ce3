package hub

import (
	"encoding/json"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// handleOf reads to, the name an agent gave for another agent (SendTask,
// SendMessage, SessionOpen): a handle, or an address of this deployment
// as the connection reached it, an agent domain's included
// (publicurl.HandleAt). here is false for a URL that names no agent here.
// A lookup that failed is answered here (to the frame id, if any) and
// reported with ok false.
func (c *conn) handleOf(id json.RawMessage, to string) (handle string, here, ok bool) {
	handle, here, err := publicurl.HandleAt(c.ctx, c.base, to, c.hub.Agents)
	if err != nil {
		c.log.Error("read an address", "err", err)
		if len(id) > 0 {
			c.replyError(id, connproto.CodeInternal, "internal error")
		}
		return "", false, false
	}
	return handle, here, true
}
