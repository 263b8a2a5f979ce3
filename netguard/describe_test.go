package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDescribeErrorNamesNoHost: the descriptions of failed requests keep
// the URL (which may hold a secret) and the host name out, and a refusal
// stays recognisable.
func TestDescribeErrorNamesNoHost(t *testing.T) {
	c := NewClient(Options{Timeout: 2 * time.Second})
	_, err := c.Get("http://127.0.0.1:1/secret-path")
	got := DescribeError(err)
	if !errors.Is(got, ErrRefused) || strings.Contains(got.Error(), "secret-path") {
		t.Fatalf("refused: %v", got)
	}
	_, err = NewClient(Options{AllowPrivate: true, Timeout: 2 * time.Second}).Get("http://127.0.0.1:1/secret-path")
	if got := DescribeError(err); !strings.HasPrefix(got.Error(), "could not connect") || strings.Contains(got.Error(), "secret-path") {
		t.Fatalf("connection refused: %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:1/secret-path", nil)
	_, err = NewClient(Options{AllowPrivate: true}).Do(req)
	if got := DescribeError(err); got.Error() != "canceled" {
		t.Fatalf("canceled: %v", got)
	}
}

// TestDescribeTLSErrorNamesNoHost: a certificate that does not verify is
// described without the host names its error would carry.
func TestDescribeTLSErrorNamesNoHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	c := NewClient(Options{AllowPrivate: true, Timeout: 2 * time.Second})
	_, err := c.Get(srv.URL + "/secret-path") // httptest's certificate, trusted by no one here
	got := DescribeError(err)
	if got.Error() != "its TLS certificate is not trusted" {
		t.Fatalf("an untrusted certificate: %v", got)
	}
	wrong := &url.Error{Op: "Get", URL: "https://secret.example/x", Err: &tls.CertificateVerificationError{
		Err: x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{"other.example"}}, Host: "secret.example"}}}
	if got := DescribeError(wrong).Error(); strings.Contains(got, "example") {
		t.Fatalf("a certificate for another host: %q", got)
	}
}

// TestFollowOnlyBodyKeepingRedirects: a 302 is the answer, a 307 is
// followed and checked by the extra rule.
func TestFollowOnlyBodyKeepingRedirects(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer target.Close()
	redirect := func(code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target.URL, code) }))
	}
	opts := Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	if !opts.AllowsPlainHTTP() || (Options{}).AllowsPlainHTTP() {
		t.Fatal("plain http allowed only where the guard is opened")
	}
	extraCalls := 0
	c := NewClient(opts)
	FollowOnlyBodyKeepingRedirects(c, func(*http.Request, []*http.Request) error { extraCalls++; return nil })
	r302 := redirect(http.StatusFound)
	defer r302.Close()
	resp, err := c.Post(r302.URL, "text/plain", strings.NewReader("x"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("302: %v %v", resp, err)
	}
	resp.Body.Close()
	r307 := redirect(http.StatusTemporaryRedirect)
	defer r307.Close()
	resp, err = c.Post(r307.URL, "text/plain", strings.NewReader("x"))
	if err != nil || resp.StatusCode != http.StatusNoContent || extraCalls != 1 {
		t.Fatalf("307: %v %v, extra rule called %d times", resp, err, extraCalls)
	}
	resp.Body.Close()
}
