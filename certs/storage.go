package certs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/switchboard-dev/switchboard"
)

// Defaults of Storage's locks.
const (
	// DefaultLockTTL is how long a lock outlives the last sign of life of
	// its holder: a process that died holding one blocks the others this
	// long at most.
	DefaultLockTTL = 30 * time.Second
	// DefaultLockPoll is how often Lock asks again for a lock another
	// holds.
	DefaultLockPoll = time.Second
)

// Storage is certmagic's storage on the server's store
// (switchboard.CertStore): certificates, their metadata and the ACME
// account in the database every instance shares, private keys sealed at
// rest, and locks that work across instances. It implements
// certmagic.Storage and certmagic.LockLeaseRenewer.
//
// A lock is a row with a holder (a token of the Lock call that took it) and
// an expiry. The holder's process moves the expiry on every TTL/3 while it
// holds the lock, so a lock lives as long as its holder, and TTL after a
// holder that died. RenewLockLease checks that the lock is still held and
// moves its expiry TTL on: a longer lease is not needed (the keep-alive
// runs while the holder lives) and would only keep the others waiting
// after a crash.
type Storage struct {
	store  switchboard.CertStore
	logger *slog.Logger
	ttl    time.Duration // immutable
	poll   time.Duration // immutable

	mu     sync.Mutex
	held   map[string]*heldLock // guarded by mu: the locks this process holds, by name
	closed bool                 // guarded by mu: Close ran; the store may be gone
	calls  sync.WaitGroup       // the store calls in flight
}

var (
	_ certmagic.Storage          = (*Storage)(nil)
	_ certmagic.LockLeaseRenewer = (*Storage)(nil)
)

// heldLock is a lock this process holds: its token and its keep-alive.
type heldLock struct {
	token string
	stop  chan struct{} // closed to stop the keep-alive
	done  chan struct{} // closed when the keep-alive ended
}

// errClosed is what a Storage answers once closed.
var errClosed = errors.New("certificate storage closed")

// NewStorage returns certmagic's storage on store. ttl and poll of zero mean
// DefaultLockTTL and DefaultLockPoll.
func NewStorage(store switchboard.CertStore, logger *slog.Logger, ttl, poll time.Duration) *Storage {
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	if poll <= 0 {
		poll = DefaultLockPoll
	}
	return &Storage{store: store, logger: logger, ttl: ttl, poll: poll, held: make(map[string]*heldLock)}
}

// String names the storage in certmagic's logs.
func (s *Storage) String() string { return "switchboard store" }

// begin counts a store call in flight, unless the storage is closed.
func (s *Storage) begin() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	s.calls.Add(1)
	return nil
}

// isPrivateKey reports whether the file at key is a private key, to be
// sealed at rest: a certificate's key and the ACME account's end in
// ".key"; a key certmagic set aside as compromised in ".key.compromised".
func isPrivateKey(key string) bool {
	base := path.Base(key)
	return strings.HasSuffix(base, ".key") || strings.Contains(base, ".key.")
}

// notExist turns the store's ENOTFOUND into fs.ErrNotExist, which
// certmagic looks for.
func notExist(key string, err error) error {
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return err
}

// Store implements certmagic.Storage.
func (s *Storage) Store(ctx context.Context, key string, value []byte) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.calls.Done()
	return s.store.PutCertFile(ctx, &switchboard.CertFile{Key: key, Value: value, Secret: isPrivateKey(key)})
}

// Load implements certmagic.Storage.
func (s *Storage) Load(ctx context.Context, key string) ([]byte, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.calls.Done()
	f, err := s.store.FindCertFile(ctx, key)
	if err != nil {
		return nil, notExist(key, err)
	}
	return f.Value, nil
}

// Delete implements certmagic.Storage.
func (s *Storage) Delete(ctx context.Context, key string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.calls.Done()
	return s.store.DeleteCertFiles(ctx, key)
}

// Exists implements certmagic.Storage: a file, or a directory with files.
func (s *Storage) Exists(ctx context.Context, key string) bool {
	if err := s.begin(); err != nil {
		return false
	}
	defer s.calls.Done()
	keys, err := s.store.ListCertFiles(ctx, key)
	return err == nil && len(keys) > 0
}

// List implements certmagic.Storage: the files and directories right
// under dir, or with recursive every file and directory under it.
func (s *Storage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.calls.Done()
	keys, err := s.store.ListCertFiles(ctx, dir)
	if err != nil {
		return nil, err
	}
	if !recursive && path.Base(dir) == "users" {
		keys = wholeAccounts(keys)
	}
	return listUnder(dir, keys, recursive)
}

// wholeAccounts keeps, of the keys under an ACME CA's users directory, the
// accounts whose registration (.json) and private key (.key) are both
// stored. certmagic, without an email, takes the newest account it lists
// and loads it; an account half written by another issuer or instance
// (it stores the two files one after the other) would load as "not found"
// and be created again with the directory's name, "default", as contact:
// a registration every CA refuses (invalidContact).
func wholeAccounts(keys []string) []string {
	has := make(map[string]int) // per account directory: 1 .json, 2 .key
	for _, k := range keys {
		switch path.Ext(k) {
		case ".json":
			has[path.Dir(k)] |= 1
		case ".key":
			has[path.Dir(k)] |= 2
		}
	}
	out := keys[:0:0]
	for _, k := range keys {
		if has[path.Dir(k)] == 3 {
			out = append(out, k)
		}
	}
	return out
}

// listUnder returns what List answers for dir from the keys at and under
// it.
func listUnder(dir string, keys []string, recursive bool) ([]string, error) {
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	var out []string
	seen := make(map[string]bool)
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		if k == dir {
			continue // a file, not a directory
		}
		rest := strings.TrimPrefix(k, prefix)
		parts := strings.Split(rest, "/")
		if !recursive {
			add(prefix + parts[0])
			continue
		}
		for i := range parts {
			add(prefix + strings.Join(parts[:i+1], "/"))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, fs.ErrNotExist)
	}
	return out, nil
}

// Stat implements certmagic.Storage.
func (s *Storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	if err := s.begin(); err != nil {
		return certmagic.KeyInfo{}, err
	}
	defer s.calls.Done()
	f, err := s.store.FindCertFile(ctx, key)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: f.Modified, Size: int64(len(f.Value)), IsTerminal: true}, nil
	} else if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		return certmagic.KeyInfo{}, err
	}
	keys, err := s.store.ListCertFiles(ctx, key)
	if err != nil {
		return certmagic.KeyInfo{}, err
	}
	if len(keys) == 0 {
		return certmagic.KeyInfo{}, fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
}

// Lock implements certmagic.Locker: it takes the lock name, asking again
// every poll interval while another holds it, until it has it or ctx
// ends; then it keeps the lock alive until Unlock.
func (s *Storage) Lock(ctx context.Context, name string) error {
	token := switchboard.NewID()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
		took, err := s.tryLock(ctx, name, token)
		if err != nil {
			return err
		}
		if took {
			return nil
		}
		t.Reset(s.poll)
	}
}

// tryLock asks the store for the lock once, and on success records it and
// starts its keep-alive.
func (s *Storage) tryLock(ctx context.Context, name, token string) (bool, error) {
	if err := s.begin(); err != nil {
		return false, err
	}
	defer s.calls.Done()
	took, err := s.store.TryLockCert(ctx, name, token, s.ttl)
	if err != nil || !took {
		return false, err
	}
	h := &heldLock{token: token, stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	s.held[name] = h
	s.mu.Unlock()
	go s.keepAlive(name, h)
	return true, nil
}

// keepAlive moves the expiry of a held lock on every TTL/3 until it is
// released, or found lost.
func (s *Storage) keepAlive(name string, h *heldLock) {
	defer close(h.done)
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		if err := s.renew(context.Background(), name, h.token); err != nil {
			if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
				s.logger.Warn("certificate lock lost: it expired and another instance took it over", "lock", name)
				return
			}
			s.logger.Warn("keep certificate lock", "lock", name, "err", err)
		}
	}
}

// renew moves the expiry of a lock this process holds TTL on.
func (s *Storage) renew(ctx context.Context, name, token string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.calls.Done()
	ctx, cancel := context.WithTimeout(ctx, s.ttl/3)
	defer cancel()
	return s.store.RenewCertLock(ctx, name, token, s.ttl)
}

// RenewLockLease implements certmagic.LockLeaseRenewer: it fails if this
// process no longer holds the lock, and otherwise moves its expiry TTL on
// (see Storage for why not lease).
func (s *Storage) RenewLockLease(ctx context.Context, name string, lease time.Duration) error {
	s.mu.Lock()
	h := s.held[name]
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("lock %s is not held by this process", name)
	}
	return s.renew(ctx, name, h.token)
}

// Unlock implements certmagic.Locker.
func (s *Storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("lock %s is not held by this process", name)
	}
	close(h.stop)
	<-h.done
	if err := s.begin(); err != nil {
		return nil // Close released it
	}
	defer s.calls.Done()
	return s.store.UnlockCert(ctx, name, h.token)
}

// Close releases the locks this process holds, waits for the store calls
// in flight, and makes every later call fail: after it, the store may be
// closed. certmagic's goroutines may outlive the server that stopped them
// by a moment; they find the storage closed.
func (s *Storage) Close() error {
	s.mu.Lock()
	held := s.held
	s.held = make(map[string]*heldLock)
	s.mu.Unlock()
	var errs []error
	for name, h := range held {
		close(h.stop)
		<-h.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, s.store.UnlockCert(ctx, name, h.token))
		cancel()
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.calls.Wait()
	return errors.Join(errs...)
}
