// Package promtest parses the Prometheus text exposition format (0.0.4)
// strictly, for tests: it fails on anything a scraper could read
// differently than meant, so that tests of /metrics check the format, not
// just the presence of a few strings.
package promtest
