package pairing

import (
	"fmt"
	"time"
)

// OAuth error codes of the token endpoint (RFC 6749 section 5.2, RFC 8628
// section 3.5).
const (
	ErrInvalidRequest       = "invalid_request"
	ErrInvalidGrant         = "invalid_grant"
	ErrUnsupportedGrantType = "unsupported_grant_type"
	ErrAuthorizationPending = "authorization_pending"
	ErrSlowDown             = "slow_down"
	ErrAccessDenied         = "access_denied"
	ErrExpiredToken         = "expired_token"
	ErrServerError          = "server_error"
)

// Error is an OAuth error as the token endpoint answers it: HTTP 400 with
// {error, error_description}, unless Status says otherwise.
type Error struct {
	Code        string
	Description string
	// Status is the HTTP status; 0 means 400.
	Status int
	// RetryAfter, when set, is sent as Retry-After.
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("oauth error %s: %s", e.Code, e.Description) }

func oauthError(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}
