package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
)

// DescribeError describes the error of a request that got no answer in
// words that name neither the URL nor the host name: what a sender may
// record, log and show to whoever configured the target, even when the URL
// holds a secret. A refusal by the guard still satisfies
// errors.Is(err, ErrRefused) and names only the address refused.
func DescribeError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var nerr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var hostErr x509.HostnameError
	var authorityErr x509.UnknownAuthorityError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, ErrRefused):
		if errors.As(err, &opErr) {
			err = opErr.Err
		}
		return fmt.Errorf("could not connect: %w", err)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout():
		return errors.New("no answer in time")
	case errors.Is(err, context.Canceled):
		return errors.New("canceled")
	case errors.As(err, &dnsErr):
		return fmt.Errorf("the host name did not resolve: %s", dnsErr.Err)
	case errors.As(err, &hostErr):
		return errors.New("its TLS certificate is not for this host") // the error names both
	case errors.As(err, &authorityErr):
		return errors.New("its TLS certificate is not trusted")
	case errors.As(err, &certErr):
		return errors.New("its TLS certificate could not be verified")
	case errors.As(err, &opErr) && opErr.Op == "dial":
		cause := opErr.Err
		var sysErr *os.SyscallError
		if errors.As(cause, &sysErr) {
			cause = sysErr.Err
		}
		return fmt.Errorf("could not connect: %w", cause)
	}
	return fmt.Errorf("the request failed: %w", err)
}
