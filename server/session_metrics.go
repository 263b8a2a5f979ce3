package server

import (
	"slices"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/session"
)

// sessionReasons are the label values of switchboard_session_closes_total:
// the reasons the server tells an agent its session ended, and "other".
var sessionReasons = []string{connproto.SessionReasonClosed, connproto.SessionReasonPeerDisconnected,
	connproto.SessionReasonDisconnected, connproto.SessionReasonTimeout, connproto.SessionReasonFrameTooLarge,
	connproto.SessionReasonFlowControl, connproto.SessionReasonProtocol, connproto.SessionReasonNotAllowed,
	connproto.SessionReasonUnknown, "other"}

// registerSessions registers the live sessions' metrics and has the
// service count its closes by reason.
func (pm *processMetrics) registerSessions(s *session.Service) {
	closes := metrics.NewCounterVec("switchboard_session_closes_total",
		"Live sessions whose end this instance told one of its agents, by reason (docs/connector-protocol.md, \"Live sessions\").",
		metrics.Label{Name: "reason", Values: sessionReasons})
	s.OnClosed = func(reason string) {
		if !slices.Contains(sessionReasons, reason) {
			reason = "other"
		}
		closes.With(reason).Inc()
	}
	pm.reg.MustRegister(closes,
		metrics.NewGaugeFunc("switchboard_session_ends",
			"Ends of live sessions this instance holds (one per agent of a session connected here).",
			func() float64 { return float64(s.Counts().Ends) }),
		metrics.NewCounterFunc("switchboard_sessions_opened_total",
			"Live sessions opened by agents connected to this instance.",
			func() float64 { return float64(s.Counts().Opened) }),
		metrics.NewCounterFunc("switchboard_session_frames_total",
			"Frames of live sessions this instance passed on to its agents.",
			func() float64 { return float64(s.Counts().Frames) }),
		metrics.NewGaugeFunc("switchboard_session_buffered_frames",
			"Frames passed on to agents of this instance and not yet acknowledged by them: at most a window per session end.",
			func() float64 { return float64(s.Counts().Buffered) }))
}
