package httpapi

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// codes maps each error code to its HTTP status (owner API, and the status
// of A2A answers that are not JSON-RPC-level), its JSON-RPC error code and
// the reason string of the A2A 1.0 ErrorInfo detail. This table is the only
// place where codes are translated. EQUOTA (a peer's quota of open tasks
// or stored bytes) has a JSON-RPC code of our own in the range JSON-RPC
// leaves to implementations, away from the A2A codes, which count up from
// -32001; so has ENOAGENT (the network found no agent for the work), whose
// errors also carry the reason "no_agent_found" (noAgentData); so has
// EUNAVAILABLE (the server cannot store the work now: its storage is
// full), answered with 503 and Retry-After (unavailable).
var codes = map[switchboard.Code]Translation{
	switchboard.EINTERNAL:               {http.StatusInternalServerError, -32603, "INTERNAL_ERROR"},
	switchboard.EINVALID:                {http.StatusBadRequest, -32602, "INVALID_PARAMS"},
	switchboard.EUNPROCESSABLE:          {http.StatusUnprocessableEntity, -32602, "INVALID_PARAMS"},
	switchboard.ENOTFOUND:               {http.StatusNotFound, -32001, "TASK_NOT_FOUND"},
	switchboard.ECONFLICT:               {http.StatusConflict, -32602, "INVALID_PARAMS"},
	switchboard.EUNAUTHORIZED:           {http.StatusUnauthorized, -31401, "UNAUTHENTICATED"},
	switchboard.EFORBIDDEN:              {http.StatusForbidden, -31403, "UNAUTHORIZED"},
	switchboard.ETOOLARGE:               {http.StatusRequestEntityTooLarge, -32600, "INVALID_REQUEST"},
	switchboard.ERATELIMITED:            {http.StatusTooManyRequests, -32000, "RATE_LIMITED"},
	switchboard.EQUOTA:                  {http.StatusTooManyRequests, -32050, "QUOTA_EXCEEDED"},
	switchboard.ENOAGENT:                {http.StatusNotFound, -32051, "NO_AGENT_FOUND"},
	switchboard.EUPSTREAM:               {http.StatusBadGateway, -32603, "INTERNAL_ERROR"},
	switchboard.EUNAVAILABLE:            {http.StatusServiceUnavailable, -32052, "UNAVAILABLE"},
	switchboard.ENOTCANCELABLE:          {http.StatusConflict, -32002, "TASK_NOT_CANCELABLE"},
	switchboard.EPUSHNOTSUPPORTED:       {http.StatusBadRequest, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	switchboard.EUNSUPPORTED:            {http.StatusBadRequest, -32004, "UNSUPPORTED_OPERATION"},
	switchboard.ECONTENTTYPE:            {http.StatusBadRequest, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
	switchboard.EINVALIDAGENTRESPONSE:   {http.StatusBadGateway, -32006, "INVALID_AGENT_RESPONSE"},
	switchboard.EEXTENDEDCARDNOTCONFIG:  {http.StatusBadRequest, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	switchboard.EEXTENSIONSUPPORTNEEDED: {http.StatusBadRequest, -32008, "EXTENSION_SUPPORT_REQUIRED"},
	switchboard.EVERSIONNOTSUPPORTED:    {http.StatusBadRequest, -32009, "VERSION_NOT_SUPPORTED"},
}

// Translation is what an error code is on each wire: the HTTP status, the
// JSON-RPC error code, the reason of A2A 1.0's ErrorInfo detail.
type Translation struct {
	Status int
	RPC    int
	Reason string
}

// Translate returns the translation of code; an unknown code is
// translated as EINTERNAL.
func Translate(code switchboard.Code) Translation {
	if c, ok := codes[code]; ok {
		return c
	}
	return codes[switchboard.EINTERNAL]
}

// HTTPStatus returns the HTTP status for an error code.
func HTTPStatus(code switchboard.Code) int {
	if c, ok := codes[code]; ok {
		return c.Status
	}
	return http.StatusInternalServerError
}

// rateLimitedLogger logs at most one message per interval and counts the
// ones it drops, so that a flood of failing requests cannot flood the log.
type rateLimitedLogger struct {
	log      *slog.Logger
	interval time.Duration

	mu      sync.Mutex
	last    time.Time // guarded by mu
	dropped int       // guarded by mu
}

func newRateLimitedLogger(log *slog.Logger, interval time.Duration) *rateLimitedLogger {
	return &rateLimitedLogger{log: log, interval: interval}
}

// Error logs msg unless another message was logged within the interval.
func (l *rateLimitedLogger) Error(msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < l.interval {
		l.dropped++
		l.mu.Unlock()
		return
	}
	dropped := l.dropped
	l.last, l.dropped = now, 0
	l.mu.Unlock()
	if dropped > 0 {
		args = append(args, "dropped_since_last", dropped)
	}
	l.log.Error(msg, args...)
}

// unavailableRetry is the Retry-After of an answer that the server cannot
// give now because its storage is full: long enough for an operator or a
// cleanup to free space, short enough to take work again soon after.
const unavailableRetry = "30"
