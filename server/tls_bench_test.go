package server_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// BenchmarkNewConnection measures what a new connection costs a server,
// with one request on it (GET /healthz) and no keep-alive: over HTTPS, a
// full TLS handshake each (TLS 1.3, an ECDSA P-256 certificate, the key
// type certmagic obtains), one resumed from a session ticket (a client
// that keeps its session cache, as browsers do: no certificate signed nor
// checked, the key exchange still made), and over plain HTTP for
// comparison. Client and
// server share the machine's cores; b.RunParallel runs GOMAXPROCS clients.
// ns/op is per connection; connections/s is 1e9 divided by it.
//
//	go test -run '^$' -bench BenchmarkNewConnection -benchtime 5s ./server/
func BenchmarkNewConnection(b *testing.B) {
	s, roots := runSelfSigned(b, "bench.test", server.Config{MaxUnauthConns: -1})
	for _, tc := range []struct {
		name, base string
		resume     bool
	}{{"https", s.HTTPSURL(), false}, {"https-resumed", s.HTTPSURL(), true}, {"http", s.URL(), false}} {
		b.Run(tc.name, func(b *testing.B) {
			base := tc.base
			cc := &tls.Config{ServerName: "bench.test", RootCAs: roots}
			if tc.resume {
				cc.ClientSessionCache = tls.NewLRUClientSessionCache(64)
			}
			tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: cc}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			url := base + "/healthz"
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || (strings.HasPrefix(url, "https") && resp.TLS == nil) {
						b.Errorf("%s: %d", url, resp.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "conns/s")
		})
	}
}

// BenchmarkKeepAliveRequest measures what TLS adds to a request on a
// connection kept alive: GET /healthz with a 1 KiB query string over
// HTTPS (HTTP/1.1, the handshake done once per client) and over plain
// HTTP. Client and server share the machine's cores.
//
//	go test -run '^$' -bench BenchmarkKeepAliveRequest -benchtime 5s ./server/
func BenchmarkKeepAliveRequest(b *testing.B) {
	s, roots := runSelfSigned(b, "bench.test", server.Config{MaxUnauthConns: -1})
	query := "?pad=" + strings.Repeat("x", 1024)
	for _, tc := range []struct{ name, base string }{{"https", s.HTTPSURL()}, {"http", s.URL()}} {
		b.Run(tc.name, func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: 64, TLSClientConfig: &tls.Config{ServerName: "bench.test", RootCAs: roots}}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			url := tc.base + "/healthz" + query
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
