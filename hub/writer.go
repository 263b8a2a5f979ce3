package hub

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
)

// refreshEvery is how often a connection rereads its agent and token
// without a hint, in case a hint was lost.
const refreshEvery = time.Minute

// writeLoop owns every write to the socket: it sends the reader's answers,
// offers the agent's queued work (once the agent has said hello, and again
// on every hint, acknowledgement and poll), and pings. It returns when the
// connection ends; its error closes the connection.
func (c *conn) writeLoop(watch switchboard.Watch) error {
	cfg := c.hub.cfg
	ping := time.NewTicker(cfg.HeartbeatInterval)
	defer ping.Stop()
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	ready := c.ready
	helloDone := false
	lastRefresh := time.Now()

	for {
		claim := false
		select {
		case <-c.ctx.Done():
			return nil
		case b := <-c.out:
			if err := c.write(b); err != nil {
				return err
			}
		case <-ready:
			ready, helloDone, claim = nil, true, true
		case _, ok := <-watch.C():
			if !ok {
				return &closeErr{CloseRestart, "server restarting"}
			}
			// Something changed for this agent: work, settings or its token.
			if err := c.refresh(); err != nil {
				return err
			}
			lastRefresh, claim = time.Now(), helloDone
		case <-c.more:
			claim = helloDone
		case <-poll.C:
			if time.Since(lastRefresh) > refreshEvery {
				if err := c.refresh(); err != nil {
					return err
				}
				lastRefresh = time.Now()
			}
			claim = helloDone
		case <-ping.C:
			if err := c.ping(); err != nil {
				return err
			}
		}
		if claim {
			if err := c.offer(); err != nil {
				return err
			}
		}
	}
}

// write writes one frame within the write timeout.
func (c *conn) write(b []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.WriteTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// ping checks that the agent is alive: it must answer within one heartbeat
// interval.
func (c *conn) ping() error {
	ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.HeartbeatInterval)
	defer cancel()
	if err := c.ws.Ping(ctx); err != nil {
		if c.ctx.Err() != nil {
			return nil
		}
		c.log.Info("agent did not answer a ping", "err", err)
		return &closeErr{CloseHeartbeat, "no answer to a ping"}
	}
	return nil
}

// refresh rereads the agent and the token the connection holds, and closes
// the connection if either is no longer good.
func (c *conn) refresh() error {
	agent, err := c.hub.Agents.FindAgentByID(c.ctx, c.agentID)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return &closeErr{CloseGone, "the agent was deleted"}
	case err != nil:
		return nil
	case agent.AccountDisabled:
		return &closeErr{CloseGone, "the agent's account is disabled"}
	case agent.Mode != switchboard.ModeConnector:
		return &closeErr{CloseGone, "the agent is no longer in connector mode"}
	}
	tok, err := c.hub.Tokens.FindTokenByHash(c.ctx, c.tokenHash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && (tok.Kind != switchboard.TokenAgent || tok.AgentID != c.agentID)) {
		return &closeErr{CloseUnauthorized, "the agent token was revoked or rotated"}
	} else if err != nil {
		return nil // the store will answer next time
	}
	c.agent.Store(agent)
	return nil
}

// offer claims queued work for the agent, as much as the in-flight limit
// allows, and sends each offer as a request whose id is the delivery id.
func (c *conn) offer() error {
	for {
		c.mu.Lock()
		room := c.hub.cfg.MaxInflight - len(c.inflight)
		c.mu.Unlock()
		if room <= 0 {
			return nil
		}
		offers, err := c.hub.Service.ClaimOffers(c.ctx, c.agent.Load(), c.holder, room)
		if err != nil {
			if c.ctx.Err() != nil || errors.Is(err, switchboard.ErrStoreClosed) {
				return nil
			}
			c.log.Error("claim offers", "err", err)
			return nil // the next hint or poll tries again
		}
		for _, o := range offers {
			req := request{JSONRPC: "2.0", ID: o.Delivery.ID}
			if o.Cancel != nil {
				req.Method, req.Params = MethodCancelTask, o.Cancel
			} else {
				req.Method, req.Params = MethodSendMessage, o.Send
			}
			b, err := encode(req)
			if err != nil {
				return err
			}
			c.mu.Lock()
			c.inflight[o.Delivery.ID] = o.Delivery // before the write, so a fast answer finds it
			c.mu.Unlock()
			if err := c.write(b); err != nil {
				return err
			}
		}
		if len(offers) < room {
			return nil
		}
	}
}
