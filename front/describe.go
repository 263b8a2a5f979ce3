package front

import "github.com/switchboard-dev/switchboard/redact"

// Describe returns the text of err as logs, the owner's diagnostics and a
// connector's failure reasons give it: without the values of secrets, and
// with every URL in it redacted as wake URLs are (redact.Secrets: query
// values and user information cut), since the errors of an HTTP client
// name the URL they went to, and an upstream's URL may hold a key.
func Describe(err error, secrets *Secrets) string {
	if err == nil {
		return ""
	}
	return RedactURL(secrets.String(err.Error()))
}

// RedactURL returns text with every http(s) URL in it redacted (query
// values and user information cut, long path segments shortened): what
// logs may show of an upstream's URL.
func RedactURL(text string) string {
	return redact.Secrets(text)
}
