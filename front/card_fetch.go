package front

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
)

// The well-known paths of an agent card: 1.0 first, then 0.3.
var cardPaths = []string{"/.well-known/agent-card.json", "/.well-known/agent.json"}

// cardURLs returns the URLs to fetch an upstream's card from, in order:
// cardURL alone if set, else both well-known paths under the upstream URL
// and then under its origin. It returns a problem instead when the
// upstream is not an https URL without credentials, or when cardURL is
// not on the upstream's origin: the card fetch carries the upstream's
// credentials, which go to that origin only.
func cardURLs(upstream, cardURL string) ([]string, string) {
	u, err := url.Parse(upstream)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.User != nil {
		return nil, "the upstream is not an https URL without credentials"
	}
	if cardURL != "" {
		c, err := url.Parse(cardURL)
		if err != nil || !strings.EqualFold(c.Scheme, "https") || c.User != nil || origin(c) != origin(u) {
			return nil, "the card URL is not on the upstream's origin, so it is not fetched"
		}
		return []string{cardURL}, ""
	}
	base := strings.TrimSuffix((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), "/")
	root := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	var out []string
	for _, b := range []string{base, root} {
		for _, p := range cardPaths {
			if !slices.Contains(out, b+p) {
				out = append(out, b+p)
			}
		}
	}
	return out, ""
}

// fetchCard fetches and parses the first card found at urls. It returns
// the card as fetched and scrubbed for public (and of secrets), or the failure of the first URL that did not answer 404 (of
// the first URL if all did), in words that never hold a URL or a
// credential. It stops at the first failure to connect: the other URLs
// are on the same host.
func (c *CardCache) fetchCard(ctx context.Context, client *http.Client, urls []string, upstream, cardURL, public string, secrets *Secrets) ([]byte, *Card, string) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cl := *client
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var failure string
	for _, u := range urls {
		raw, status, problem := c.fetchOne(ctx, &cl, u)
		if problem == "" {
			card, err := ParseCardWith(raw, upstream, cardURL, public, secrets)
			if err == nil {
				return raw, card, ""
			}
			problem = "the answer is not an agent card"
		}
		if failure == "" || status != http.StatusNotFound && strings.HasPrefix(failure, "HTTP 404") {
			failure = problem
		}
		if status == 0 {
			break
		}
	}
	return nil, nil, failure
}

// fetchOne GETs one card URL, and returns its body, or the status (0 when
// no response came) and a failure in words.
func (c *CardCache) fetchOne(ctx context.Context, client *http.Client, u string) ([]byte, int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, "the card URL is not valid"
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "switchboard-front")
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, networkFailure(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, resp.StatusCode, fmt.Sprintf("HTTP %d: a redirect, which is not followed", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, resp.StatusCode, fmt.Sprintf("HTTP %d", resp.StatusCode)
	case resp.ContentLength > MaxCardBytes:
		return nil, resp.StatusCode, tooLarge
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxCardBytes+1))
	if err != nil {
		return nil, resp.StatusCode, "the connection broke while reading the card"
	}
	if len(raw) > MaxCardBytes {
		return nil, resp.StatusCode, tooLarge
	}
	return raw, resp.StatusCode, ""
}

var tooLarge = fmt.Sprintf("the card is larger than %d KiB", MaxCardBytes>>10)

// networkFailure puts in words why a request got no response, without
// the error's text, which names the URL.
func networkFailure(ctx context.Context, err error) string {
	var (
		dns     *net.DNSError
		unknown x509.UnknownAuthorityError
		verify  *tls.CertificateVerificationError
		host    x509.HostnameError
	)
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &dns):
		return "the host name does not resolve"
	case errors.As(err, &unknown), errors.As(err, &verify), errors.As(err, &host):
		return "its TLS certificate is not trusted"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	}
	return "the network failed"
}
