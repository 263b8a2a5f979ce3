package certs

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/mholt/acmez/v3/acme"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TestClassify: a failure to obtain a certificate is read by the ACME
// problem type the CA answered (found through the wrapping certmagic and
// acmez add, and in the subproblem of the name), or as a CA that could not
// be reached; each with a cause that carries the CA's words and a fix.
func TestClassify(t *testing.T) {
	problem := func(typ, detail string) error {
		return fmt.Errorf("[a.test] Obtain: solving challenge: %w", acme.Problem{Type: typ, Detail: detail, Status: 403})
	}
	for name, tc := range map[string]struct {
		err    error
		reason string
		cause  string
	}{
		"RateLimited":   {problem(acme.ProblemTypeRateLimited, "too many certificates (5) already issued; retry after 2026-12-06"), ownerapi.TLSReasonRateLimited, "retry after 2026-12-06"},
		"DNS":           {problem(acme.ProblemTypeDNS, "NXDOMAIN looking up A for a.test"), ownerapi.TLSReasonDNS, "NXDOMAIN"},
		"Connection":    {problem(acme.ProblemTypeConnection, "dial tcp 192.0.2.1:80: connection refused"), ownerapi.TLSReasonUnreachable, "resolves to 192.0.2.1"},
		"TLS":           {problem(acme.ProblemTypeTLS, "remote error: tls: internal error"), ownerapi.TLSReasonUnreachable, "tls: internal error"},
		"Unauthorized":  {problem(acme.ProblemTypeUnauthorized, "The key authorization file from the server did not match this challenge"), ownerapi.TLSReasonWrongServer, "did not match"},
		"WrongResponse": {problem(acme.ProblemTypeIncorrectResponse, "incorrect value"), ownerapi.TLSReasonWrongServer, "incorrect value"},
		// Pebble says unauthorized when TLS-ALPN-01 cannot connect.
		"UnauthorizedNoConnection": {problem(acme.ProblemTypeUnauthorized, "Failed to connect to 127.0.0.2:443 for the tls-alpn-01 challenge"), ownerapi.TLSReasonUnreachable, "Failed to connect"},
		"Rejected":                 {problem(acme.ProblemTypeRejectedIdentifier, "a.test is a forbidden domain"), ownerapi.TLSReasonRefused, "forbidden"},
		"CAA":                      {problem(acme.ProblemTypeCAA, "CAA record forbids issuance"), ownerapi.TLSReasonRefused, "CAA"},
		"Subproblem": {fmt.Errorf("x: %w", acme.Problem{Type: acme.ProblemTypeCompound, Detail: "several", Subproblems: []acme.Subproblem{
			{Problem: acme.Problem{Type: acme.ProblemTypeCAA, Detail: "b: caa"}, Identifier: acme.Identifier{Type: "dns", Value: "b.test"}},
			{Problem: acme.Problem{Type: acme.ProblemTypeDNS, Detail: "a: nxdomain"}, Identifier: acme.Identifier{Type: "dns", Value: "a.test"}},
		}}), ownerapi.TLSReasonDNS, "a: nxdomain"},
		"CARefused":     {fmt.Errorf("registering account: %w", &url.Error{Op: "Get", URL: "https://ca.test/dir", Err: &net.OpError{Op: "dial", Err: fmt.Errorf("connection refused")}}), ownerapi.TLSReasonCAUnreachable, "https://ca.test/dir"},
		"CAUntrusted":   {fmt.Errorf("provisioning client: %w", x509.UnknownAuthorityError{}), ownerapi.TLSReasonCAUnreachable, "could not reach the CA"},
		"CAFlattened":   {fmt.Errorf("performing request: Get \"https://ca.test/dir\": dial tcp 192.0.2.9:443: i/o timeout"), ownerapi.TLSReasonCAUnreachable, "i/o timeout"},
		"SomethingElse": {fmt.Errorf("failed storage check"), ownerapi.TLSReasonOther, "failed storage check"},
		"OtherProblem":  {problem(acme.ProblemTypeServerInternal, "oops"), ownerapi.TLSReasonOther, "oops"},
	} {
		t.Run(name, func(t *testing.T) {
			f := classify(tc.err, "a.test", "https://ca.test/dir", " (it resolves to 192.0.2.1)")
			if f.reason != tc.reason || !strings.Contains(f.cause, tc.cause) || f.fix == "" {
				t.Fatalf("classify: %+v; want reason %s and a cause with %q", f, tc.reason, tc.cause)
			}
		})
	}
}
