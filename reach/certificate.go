package reach

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// healthHint is where the server says why it has no certificate for a
// name, or could not renew one.
const healthHint = "switchboard health shows the server's last failure to obtain or renew it"

// checkCertificate dials t's name on its port at the first of addrs that
// answers, with the name in the TLS handshake, and fills cert with the
// certificate served: whether it is trusted, for the name, and how long
// it has left. It returns the connection, for the fetch (nil when there
// is none), which the caller closes.
func (c *Checker) checkCertificate(ctx context.Context, t Target, addrs []netip.Addr, cert *ownerapi.ReachCertificate) *tls.Conn {
	if len(addrs) == 0 {
		cert.State = ownerapi.ReachNotChecked
		return nil
	}
	port := t.Port
	if port == 0 {
		port = c.cfg.Port
	}
	var raw net.Conn
	var err error
	for _, a := range addrs {
		var d net.Dialer
		if raw, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String()); err == nil {
			break
		}
	}
	if err != nil {
		cert.State, cert.Problem = ownerapi.ReachFailing, fmt.Sprintf("could not connect to %s on port %d (%s): %s: check that the server listens there (serve --https-addr) and that no firewall closes the port",
			t.Name, port, joinAddrs(addrs), dialCause(err))
		return nil
	}
	// The chain is verified below, by hand, so that a certificate that
	// fails is still described (its names, issuer, end).
	conn := tls.Client(raw, &tls.Config{ServerName: t.Name, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}) //nolint:gosec
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		if dialCause(err) == noAnswer {
			cert.State, cert.Problem = ownerapi.ReachFailing, fmt.Sprintf("the TLS handshake with %s on port %d got no answer in time: is it a TLS server (serve --https-addr), and not something else, that listens there?",
				t.Name, port)
			return nil
		}
		cert.State, cert.Problem = ownerapi.ReachFailing, fmt.Sprintf("the TLS handshake with %s failed (%s): the server has no certificate for the name yet; %s",
			t.Name, dialCause(err), healthHint)
		return nil
	}
	c.judge(t.Name, conn.ConnectionState().PeerCertificates, cert)
	return conn
}

// judge fills cert from the chain served for name.
func (c *Checker) judge(name string, chain []*x509.Certificate, cert *ownerapi.ReachCertificate) {
	leaf := chain[0]
	now := c.cfg.Now()
	notAfter := leaf.NotAfter.UTC()
	days := int(math.Floor(leaf.NotAfter.Sub(now).Hours() / 24))
	cert.Names, cert.Issuer, cert.NotAfter, cert.DaysLeft = leaf.DNSNames, issuer(leaf), &notAfter, &days
	inter := x509.NewCertPool()
	for _, ic := range chain[1:] {
		inter.AddCert(ic)
	}
	_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: c.cfg.Roots, Intermediates: inter, CurrentTime: now})
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var unknown x509.UnknownAuthorityError
	cert.State = ownerapi.ReachFailing
	switch {
	case err == nil:
		cert.State = ownerapi.ReachOK
		if life := leaf.NotAfter.Sub(leaf.NotBefore); leaf.NotAfter.Sub(now) < life/6 {
			cert.State = ownerapi.ReachWarning
			cert.Problem = fmt.Sprintf("the certificate for %s ends in %d days (%s) and has not been renewed: %s (with --tls-cert, put a new certificate in the files)",
				name, days, notAfter.Format(time.DateOnly), healthHint)
		}
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired && now.After(leaf.NotAfter):
		cert.Problem = fmt.Sprintf("the certificate for %s expired on %s: %s", name, notAfter.Format(time.DateOnly), healthHint)
	case errors.As(err, &host):
		cert.Problem = fmt.Sprintf("the certificate served for %s is for %s, not this name: the name reaches a server that has no certificate for it (DNS pointing elsewhere), or this server has not obtained one; %s",
			name, certNames(leaf), healthHint)
	case errors.As(err, &unknown):
		cert.Problem = fmt.Sprintf("the certificate for %s (issued by %s) is not trusted: a staging or self-signed certificate; peers refuse it. Use a CA peers trust (the default --acme-ca, Let's Encrypt's production CA)",
			name, cert.Issuer)
	default:
		cert.Problem = fmt.Sprintf("the certificate for %s could not be verified: %v", name, err)
	}
}

// issuer names who issued c: its issuer's common name, or organization.
func issuer(c *x509.Certificate) string {
	if c.Issuer.CommonName != "" {
		return c.Issuer.CommonName
	}
	if len(c.Issuer.Organization) > 0 {
		return c.Issuer.Organization[0]
	}
	return c.Issuer.String()
}

// certNames names what c is for.
func certNames(c *x509.Certificate) string {
	switch {
	case len(c.DNSNames) > 0:
		return strings.Join(c.DNSNames, ", ")
	case c.Subject.CommonName != "":
		return c.Subject.CommonName
	}
	return "no name"
}

// joinAddrs returns addrs as text.
func joinAddrs(addrs []netip.Addr) string {
	return strings.Join(addrStrings(addrs), ", ")
}

// noAnswer is dialCause's words for a timeout.
const noAnswer = "no answer in time"

// dialCause is a dial's or handshake's error in few words.
func dialCause(err error) string {
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return noAnswer
	case errors.As(err, &op):
		return op.Err.Error()
	}
	return err.Error()
}
