package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/mholt/acmez/v3/acme"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// failure is why a certificate could not be had, and what to do about it.
type failure struct {
	reason string // an ownerapi.TLSReason… code
	cause  string // what happened, with the CA's own words
	fix    string // what the operator can do
}

// classify reads a failure to obtain or renew the certificate of name
// from the CA ca: the ACME problem the CA answered (RFC 8555 §6.7, its
// type and detail, or the subproblem of name), or a failure to reach the
// CA at all. dnsNote says what the name resolves to here, to name the
// address the CA tried.
func classify(err error, name, ca, dnsNote string) failure {
	var p acme.Problem
	if errors.As(err, &p) {
		return classifyProblem(problemFor(p, name), name, dnsNote)
	}
	if unreachable(err) {
		return failure{ownerapi.TLSReasonCAUnreachable,
			fmt.Sprintf("could not reach the CA at %s: %v", ca, err),
			"check that this server can make HTTPS requests to the CA (outbound firewall, proxy, DNS) and that --acme-ca is its directory URL; for a private CA, give its root with --acme-ca-root"}
	}
	return failure{ownerapi.TLSReasonOther, err.Error(), "see the server's log around this failure"}
}

// problemFor returns the subproblem of p about name if there is one (a
// compound problem lists one per identifier), else p.
func problemFor(p acme.Problem, name string) acme.Problem {
	for _, sp := range p.Subproblems {
		if strings.EqualFold(sp.Identifier.Value, name) {
			return sp.Problem
		}
	}
	if p.Type == acme.ProblemTypeCompound && len(p.Subproblems) > 0 {
		return p.Subproblems[0].Problem
	}
	return p
}

// connectSigns are the words of a validation that could not connect,
// which some CAs (Pebble, for TLS-ALPN-01) report as unauthorized.
var connectSigns = []string{"failed to connect", "connection refused", "timeout", "no route to host", "network is unreachable", "connection reset"}

// classifyProblem reads one ACME problem by its type.
func classifyProblem(p acme.Problem, name, dnsNote string) failure {
	detail := p.Detail
	if detail == "" {
		detail = p.Type
	}
	typ := p.Type
	if typ == acme.ProblemTypeUnauthorized || typ == acme.ProblemTypeIncorrectResponse {
		lower := strings.ToLower(detail)
		for _, sign := range connectSigns {
			if strings.Contains(lower, sign) {
				typ = acme.ProblemTypeConnection
				break
			}
		}
	}
	switch typ {
	case acme.ProblemTypeRateLimited:
		return failure{ownerapi.TLSReasonRateLimited,
			"the CA rate limits this account or name: " + detail,
			"wait until the limit lifts (the CA's words above say when); switchboard tries again by itself, waiting longer each time. Do not restart the server to hurry it: each start asks again. While testing, use a staging CA (--acme-ca)"}
	case acme.ProblemTypeDNS:
		return failure{ownerapi.TLSReasonDNS,
			fmt.Sprintf("the CA could not find %s in DNS: %s", name, detail),
			fmt.Sprintf("create an A record (and an AAAA record, with IPv6) for %s that points to this server's public address, and wait for it to be seen", name)}
	case acme.ProblemTypeConnection, acme.ProblemTypeTLS:
		return failure{ownerapi.TLSReasonUnreachable,
			fmt.Sprintf("the CA could not connect to %s on port 80 or 443%s: %s", name, dnsNote, detail),
			fmt.Sprintf("check that DNS for %s points to this server, and that ports 80 and 443 are open to the internet (firewall, security group) and served by switchboard (--addr :80, --https-addr :443)", name)}
	case acme.ProblemTypeUnauthorized, acme.ProblemTypeIncorrectResponse:
		return failure{ownerapi.TLSReasonWrongServer,
			fmt.Sprintf("the CA reached a server at %s%s that did not answer its challenge as this one would: %s", name, dnsNote, detail),
			fmt.Sprintf("DNS for %s points to another server, or something in front of this one (a proxy, a CDN) answers ports 80 and 443: point the name here and pass both ports through", name)}
	case acme.ProblemTypeRejectedIdentifier, acme.ProblemTypeCAA, acme.ProblemTypeUnsupportedIdentifier:
		return failure{ownerapi.TLSReasonRefused,
			fmt.Sprintf("the CA refuses to issue a certificate for %s: %s", name, detail),
			fmt.Sprintf("check that %s's CAA records (if any) allow this CA, and that the CA issues for such names", name)}
	}
	return failure{ownerapi.TLSReasonOther,
		fmt.Sprintf("the CA answered %s: %s", p.Type, detail),
		"see the server's log around this failure"}
}

// unreachable reports whether err is a failure to talk to the CA at all:
// a connection, a name or a certificate that does not verify, rather
// than an answer.
func unreachable(err error) bool {
	var (
		ue  *url.Error
		oe  *net.OpError
		de  *net.DNSError
		ve  *tls.CertificateVerificationError
		uae x509.UnknownAuthorityError
		he  x509.HostnameError
	)
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &de) || errors.As(err, &ve) || errors.As(err, &uae) || errors.As(err, &he) {
		return true
	}
	// acmez and certmagic flatten some of these into text.
	s := err.Error()
	for _, sign := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "certificate signed by unknown authority", "tls: failed to verify"} {
		if strings.Contains(s, sign) {
			return true
		}
	}
	return false
}
