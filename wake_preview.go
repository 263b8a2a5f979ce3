package switchboard

import (
	"net/url"
	"regexp"
	"strings"
)

// WakePreview turns text a peer wrote into the preview a wake carries: what
// looks like a secret is cut to its first 4 characters and "…", long URL
// path segments and query values become "…", whitespace is collapsed, and
// the result is at most MaxWakePreview characters. The preview is still
// untrusted text: every wake marks it so.
func WakePreview(text string) string {
	s := RedactSecrets(text)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > MaxWakePreview {
		s = string(r[:MaxWakePreview-1]) + "…"
	}
	return s
}

var (
	// secretAssignment matches "name: value" and "name=value" where the
	// name says it holds a secret.
	secretAssignment = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:authorization|key|token|secret|signature|password|passwd|access-client-id|cookie)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?([^\s"',;&]+)`)
	// bearerCredential matches a credential after an auth scheme.
	bearerCredential = regexp.MustCompile(`(?i)\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})`)
	// knownToken matches tokens whose prefix says what they are.
	knownToken = regexp.MustCompile(`\b(?:sb[opaw]_|sk-|sk_live_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|eyJ)[A-Za-z0-9._~+/=-]{8,}`)
	// webURL matches http(s) URLs.
	webURL = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"']+`)
)

// RedactSecrets cuts what looks like a secret in text: values of
// authorization, key, token, secret, signature, password and cookie
// fields (idempotency-key excepted), credentials after Bearer or Basic,
// tokens with well-known prefixes (Switchboard's own, API keys, JWTs), and,
// in URLs, credentials, query values and path segments of 16 characters or
// more.
func RedactSecrets(text string) string {
	s := webURL.ReplaceAllStringFunc(text, redactURL)
	s = secretAssignment.ReplaceAllStringFunc(s, func(m string) string {
		g := secretAssignment.FindStringSubmatch(m)
		if strings.EqualFold(g[1], "idempotency-key") {
			return m
		}
		scheme := g[3]
		if scheme != "" {
			scheme += " "
		}
		return g[1] + g[2] + scheme + cut(g[4])
	})
	s = bearerCredential.ReplaceAllStringFunc(s, func(m string) string {
		g := bearerCredential.FindStringSubmatch(m)
		return g[1] + " " + cut(g[2])
	})
	return knownToken.ReplaceAllStringFunc(s, cut)
}

// cut keeps the first 4 characters of a secret.
func cut(s string) string {
	if strings.HasSuffix(s, "…") {
		return s // already cut
	}
	r := []rune(s)
	if len(r) <= 4 {
		return "…"
	}
	return string(r[:4]) + "…"
}

// redactURL removes credentials and query values from a URL and shortens
// its long path segments.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "…"
	}
	out := strings.ToLower(u.Scheme) + "://"
	if u.User != nil {
		out += "…@"
	}
	out += u.Host
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if len([]rune(seg)) >= 16 {
			segs[i] = "…"
		}
	}
	out += strings.Join(segs, "/")
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		for i, kv := range q {
			if k, _, ok := strings.Cut(kv, "="); ok {
				q[i] = k + "=…"
			}
		}
		out += "?" + strings.Join(q, "&")
	}
	if u.Fragment != "" {
		out += "#…"
	}
	// A URL redacted before keeps its marks as they were.
	return strings.ReplaceAll(out, "%E2%80%A6", "…")
}
