// Package session runs live sessions between two connected agents: agent
// A asks for a session with agent B, B is asked over its socket and
// accepts or refuses, and then frames (text or JSON, at most 64 KiB each)
// flow both ways over the two sockets the agents already hold, in order,
// within a window per direction, until either side closes or a connection
// drops for longer than the grace. (Not to be confused with
// switchboard.AgentSession, which is a connection's presence in the
// store.) docs/connector-protocol.md describes the frames the agents see;
// docs/network.md ("Live sessions") the design.
//
// The server keeps no session in its store: a session lives in its two
// ends, each held by the instance that holds its agent's connection, and
// the ends talk through the switchboard.Carrier, each subscribed to its
// own subject (switchboard.LiveSessionSubject). The two ends may be on one
// instance or two; the code is the same. The open request travels to the
// instance that holds B's connection (found in the store), on that
// instance's subject.
//
// Flow control is end to end: the sending agent keeps each frame until
// the receiving agent has taken it in and says so (SessionAck), and has at
// most the window in flight, so that a reader that stops reading stops its
// sender. The server holds at most a window of frames per direction of a
// session, and ends a session whose sender goes past it (frames.go).
//
// The hub serves the sessions' methods to its connections (hub/session.go):
// it hands them to Handle and Answer, and says when a connection said
// hello (Connect) and when it ended (Disconnect).
package session
