// Package ratelimit implements switchboard.RateLimiter.
package ratelimit
