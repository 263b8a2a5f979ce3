package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// DefaultReloadInterval is how often, at most, a FileCert looks at its
// files again: one stat of each, on a handshake.
const DefaultReloadInterval = 2 * time.Second

// FileCert serves a certificate the operator keeps in two PEM files
// (serve --tls-cert, --tls-key), and takes a new pair without a restart:
// on a handshake (or a look at its Status) at most every interval, it
// looks at the files' size and modification time, and when either changed it loads them again. A new
// pair that does not load (unreadable, not PEM, a key of another
// certificate) is logged, shown in Status, and the old one kept.
type FileCert struct {
	certFile, keyFile string // immutable
	interval          time.Duration
	logger            *slog.Logger

	cert      atomic.Pointer[tls.Certificate] // the pair served; its Leaf is set
	nextCheck atomic.Int64                    // unix nanoseconds: when to look at the files again

	mu       sync.Mutex // held while the files are looked at; TryLock: one handshake does it
	seen     [2]fileStamp
	failure  *failure  // guarded by mu: the last pair that did not load, until one does
	failedAt time.Time // guarded by mu
}

// fileStamp is what says that a file changed.
type fileStamp struct {
	size int64
	mod  time.Time
}

// LoadFileCert loads the pair at certFile and keyFile; interval 0 means
// DefaultReloadInterval. It fails, saying which file and why, when a file
// cannot be read or the two do not make a pair.
func LoadFileCert(certFile, keyFile string, interval time.Duration, logger *slog.Logger) (*FileCert, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together: give both files")
	}
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	f := &FileCert{certFile: certFile, keyFile: keyFile, interval: interval, logger: logger.With("component", "certs")}
	stamps, err := f.stamps()
	if err != nil {
		return nil, err
	}
	c, err := loadPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	f.cert.Store(c)
	f.seen = stamps
	f.nextCheck.Store(time.Now().Add(interval).UnixNano())
	return f, nil
}

// stamps returns the size and time of both files.
func (f *FileCert) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, name := range []string{f.certFile, f.keyFile} {
		st, err := os.Stat(name)
		if err != nil {
			return out, fmt.Errorf("%s: %w", flagOf(i), err)
		}
		out[i] = fileStamp{st.Size(), st.ModTime()}
	}
	return out, nil
}

// flagOf names the flag of file i.
func flagOf(i int) string {
	if i == 0 {
		return "--tls-cert"
	}
	return "--tls-key"
}

// loadPair reads and checks a certificate and its key.
func loadPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-key: %w", err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %w", certFile, keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, fmt.Errorf("--tls-cert %s: %w", certFile, err)
		}
	}
	return &c, nil
}

// TLSConfig returns the TLS configuration of the HTTPS listener.
func (f *FileCert) TLSConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: f.getCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
		MinVersion:     tls.VersionTLS12,
	}
}

// getCertificate serves the pair, looking at the files first when it is
// time to.
func (f *FileCert) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.checkIfDue()
	return f.cert.Load(), nil
}

// checkIfDue looks at the files if the interval since the last look has
// passed.
func (f *FileCert) checkIfDue() {
	if time.Now().UnixNano() >= f.nextCheck.Load() {
		f.check()
	}
}

// check loads the files again if they changed since last seen. Only one
// handshake does it at a time; the others serve the pair they find.
func (f *FileCert) check() {
	if !f.mu.TryLock() {
		return
	}
	defer f.mu.Unlock()
	f.nextCheck.Store(time.Now().Add(f.interval).UnixNano())
	stamps, err := f.stamps()
	if err != nil {
		f.failedLocked(err)
		return
	}
	if stamps == f.seen {
		return
	}
	f.seen = stamps // a bad pair is tried again only when a file changes again
	c, err := loadPair(f.certFile, f.keyFile)
	if err != nil {
		f.failedLocked(err)
		return
	}
	f.cert.Store(c)
	f.failure = nil
	f.logger.Info("certificate reloaded", "cert", f.certFile, "names", c.Leaf.DNSNames, "expires", c.Leaf.NotAfter)
}

// failedLocked records a pair that did not load, once per failure.
func (f *FileCert) failedLocked(err error) {
	if f.failure != nil && f.failure.cause == err.Error() {
		return
	}
	f.failure = &failure{ownerapi.TLSReasonFiles, err.Error(),
		"write a certificate and its key as PEM, the key matching the certificate; the one loaded before is served meanwhile"}
	f.failedAt = time.Now().UTC()
	f.logger.Error("could not reload the certificate; the one loaded before is served", "err", err)
}

// names returns the names of the certificate served (its DNS names, or
// its subject's common name).
func names(c *x509.Certificate) []string {
	if len(c.DNSNames) > 0 {
		return c.DNSNames
	}
	return []string{c.Subject.CommonName}
}

// Status returns the state of the certificate, under each of its names,
// looking at the files first when it is time to (so that /readyz tells of
// a bad pair without waiting for a handshake).
func (f *FileCert) Status() map[string]ownerapi.TLSName {
	f.checkIfDue()
	leaf := f.cert.Load().Leaf
	f.mu.Lock()
	fail, failedAt := f.failure, f.failedAt
	f.mu.Unlock()
	out := make(map[string]ownerapi.TLSName)
	exp := leaf.NotAfter.UTC()
	for _, n := range names(leaf) {
		t := ownerapi.TLSName{State: ownerapi.TLSOK, Source: "file", Expires: &exp}
		if time.Now().After(leaf.NotAfter) {
			t.State = ownerapi.TLSFailed
		}
		if fail != nil {
			t.Reason, t.Cause, t.Fix, t.Failed = fail.reason, fail.cause, fail.fix, &failedAt
		}
		out[n] = t
	}
	return out
}

// Expiries returns the seconds until the certificate expires, under each
// of its names.
func (f *FileCert) Expiries() []metrics.Sample {
	leaf := f.cert.Load().Leaf
	return expiries(names(leaf), func(string) *x509.Certificate { return leaf })
}

// Close does nothing: a FileCert has no background work.
func (f *FileCert) Close() error { return nil }
