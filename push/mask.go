package push

import "net/url"

// MaskSecret shows a secret's first 4 characters when it is long enough
// for that to give nothing away (16 or more), and "…" otherwise: how the
// owner API and the console show a push configuration's token.
func MaskSecret(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) >= 16:
		return s[:4] + "…"
	}
	return "…"
}

// MaskURL replaces the query and fragment of a URL, which may carry a key,
// with "…": how the owner API and the console show a push URL.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "…"
	}
	masked := u.RawQuery != "" || u.Fragment != ""
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	if masked {
		return u.String() + "?…"
	}
	return u.String()
}
