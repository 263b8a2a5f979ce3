package ownerapi

import "time"

// Ready is the body of GET /readyz: whether the server takes work, and
// why not; with TLS, the state of each name's certificate.
type Ready struct {
	OK      bool   `json:"ok"`
	Status  string `json:"status"` // ready, starting, draining, store unreachable, storage full
	Version string `json:"version,omitempty"`
	Cause   string `json:"cause,omitempty"`
	// TLS is the state of the certificate of each name the server serves
	// HTTPS for, by name; absent without HTTPS. A name without a
	// certificate does not make the server unready: readiness is about
	// the store and draining, and a supervisor that restarted a server
	// for it would only run into the CA's rate limits.
	TLS map[string]TLSName `json:"tls,omitempty"`
}

// The states of a name's certificate.
const (
	TLSOK        = "ok"        // a certificate is served; Expires says until when
	TLSObtaining = "obtaining" // none yet: it is being asked for
	TLSFailed    = "failed"    // none: asking failed; Reason, Cause and Fix say why and what to do
)

// The reasons a certificate could not be had, in TLSName.Reason.
const (
	TLSReasonDNS           = "dns"            // the name does not resolve to this server
	TLSReasonUnreachable   = "unreachable"    // the CA could not connect to the name on port 80 or 443
	TLSReasonWrongServer   = "wrong_server"   // the CA reached a server that is not this one
	TLSReasonRateLimited   = "rate_limited"   // the CA refuses for now: too many certificates or failures
	TLSReasonCAUnreachable = "ca_unreachable" // this server could not reach the CA
	TLSReasonRefused       = "refused"        // the CA refused the name (policy, CAA records)
	TLSReasonFiles         = "files"          // the certificate files given could not be read or do not match
	TLSReasonOther         = "other"
)

// TLSName is the state of one name's certificate.
type TLSName struct {
	State string `json:"state"` // TLSOK, TLSObtaining or TLSFailed
	// Source is where the certificate comes from: "acme" (obtained at
	// start for --domain), "on_demand" (an agent's domain, obtained at
	// its first handshake) or "file" (--tls-cert).
	Source string `json:"source"`
	// Expires is the certificate's NotAfter, when one is served.
	Expires *time.Time `json:"expires,omitempty"`
	// Reason, Cause and Fix describe the last failure to obtain, renew
	// or reload the certificate (with State ok when the one served still
	// has time left): a TLSReason… code, what happened (with the CA's own
	// words), and what to do about it.
	Reason string     `json:"reason,omitempty"`
	Cause  string     `json:"cause,omitempty"`
	Fix    string     `json:"fix,omitempty"`
	Failed *time.Time `json:"failed,omitempty"` // when the last failure happened
}
