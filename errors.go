package switchboard

import (
	"errors"
	"fmt"
)

// Code is the closed set of error classes that callers outside the process
// see. The edges (httpapi) translate each code once into an HTTP status and a
// JSON-RPC error code; everything else is an internal error.
type Code string

// Error codes. The first group is generic; the second group carries the A2A
// protocol's own error classes so that the JSON-RPC edge can answer with the
// codes of the specification table.
const (
	EINTERNAL     Code = "internal"        // unexpected failure, details logged only
	EINVALID      Code = "invalid"         // the request is malformed or breaks a rule
	ENOTFOUND     Code = "not_found"       // missing, or not visible to the caller
	ECONFLICT     Code = "conflict"        // the resource exists, or is in the wrong state
	EUNAUTHORIZED Code = "unauthorized"    // no valid credential
	EFORBIDDEN    Code = "forbidden"       // a valid credential without the right
	ETOOLARGE     Code = "too_large"       // a body or field over its limit
	ERATELIMITED  Code = "rate_limited"    // too many requests in the window
	EQUOTA        Code = "quota_exceeded"  // the caller holds as much as it may (open tasks, stored bytes)
	ENOAGENT      Code = "no_agent_found"  // no agent of the network may take the work now; the message says which gate
	EUPSTREAM     Code = "upstream_failed" // a front's upstream failed; the message is generic, the owner sees the cause
	EUNAVAILABLE  Code = "unavailable"     // the server cannot do it now (its storage is full); retry later

	ENOTCANCELABLE          Code = "task_not_cancelable"
	EUNSUPPORTED            Code = "unsupported_operation"
	EPUSHNOTSUPPORTED       Code = "push_not_supported"
	ECONTENTTYPE            Code = "content_type_not_supported"
	EINVALIDAGENTRESPONSE   Code = "invalid_agent_response"
	EEXTENDEDCARDNOTCONFIG  Code = "extended_card_not_configured"
	EVERSIONNOTSUPPORTED    Code = "version_not_supported"
	EEXTENSIONSUPPORTNEEDED Code = "extension_support_required"
)

// EUNPROCESSABLE: the request is well formed, but a value may not be kept
// as it stands: a control or bidirectional formatting character in a name
// or a description (CheckName); an agent domain the server cannot serve,
// one another agent holds, or one past the account's quota
// (docs/agents.md, "Agent domains"). The message says which. The owner
// API answers it with 422.
const EUNPROCESSABLE Code = "unprocessable"

// Error is an error that is safe to show to the caller: its Message is
// written for them. Any other error reaching an edge is logged in full and
// shown as a generic internal error.
type Error struct {
	Code    Code
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("switchboard error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is, or wraps, an *Error, and
// EINTERNAL otherwise. A nil error has no code.
func ErrorCode(err error) Code {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-facing message of err if it is, or wraps,
// an *Error, and a generic text otherwise.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// TaskTooLargeError is a store's refusal to write a task whose A2A JSON
// would be larger than MaxTaskBytes: nothing of the change is written. Its
// code is ETOOLARGE; callers that refuse the change for a reason of their
// own say so in their own terms.
type TaskTooLargeError struct {
	Bytes int // the size the task would have had
}

// Error implements the error interface.
func (e *TaskTooLargeError) Error() string {
	return fmt.Sprintf("the task would grow to %d bytes, more than the %d a task may hold", e.Bytes, MaxTaskBytes)
}

// Unwrap gives the error its code and message.
func (e *TaskTooLargeError) Unwrap() error { return &Error{Code: ETOOLARGE, Message: e.Error()} }

// QuotaError is a store's refusal of a change that would take its peer past
// the TaskChange's PeerQuota: nothing of the change is written. Its code is
// EQUOTA; the relay says so to the peer in its own terms.
type QuotaError struct {
	Quota PeerQuota
	// TooMany is set when the change would pass Quota.MaxOpenTasks, and
	// otherwise it would pass Quota.MaxBytes.
	TooMany bool
	// OpenTasks and Bytes are what the peer holds without the change
	// (with Quota.HeldOpen and HeldBytes);
	// Grow is the bytes the change would add.
	OpenTasks int
	Bytes     int64
	Grow      int64
}

// Error implements the error interface.
func (e *QuotaError) Error() string {
	if e.TooMany {
		return fmt.Sprintf("the peer holds %d unfinished tasks on the agent, the most it may", e.OpenTasks)
	}
	return fmt.Sprintf("the peer's unfinished tasks on the agent would grow from %d to %d bytes, more than the %d they may hold",
		e.Bytes, e.Bytes+e.Grow, e.Quota.MaxBytes)
}

// Unwrap gives the error its code and message.
func (e *QuotaError) Unwrap() error { return &Error{Code: EQUOTA, Message: e.Error()} }

// Sentinel errors for states that callers branch on.
var (
	// ErrStoreClosed is returned by a Store after Close.
	ErrStoreClosed = errors.New("store closed")
	// ErrBusClosed is returned by a Bus after Close.
	ErrBusClosed = errors.New("bus closed")
	// ErrStorageFull is wrapped by a Store's error when a write failed for
	// want of space: nothing of it was written, what was written before is
	// kept, and the same write succeeds once space is freed. Its code is
	// EUNAVAILABLE; the edges answer 503 with Retry-After.
	ErrStorageFull = &Error{Code: EUNAVAILABLE, Message: "storage full: the server cannot store new work now; retry later"}
)
