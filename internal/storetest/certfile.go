package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var certFileTests = map[string]func(*testing.T, Store){
	"CertFilesPutFindListDelete": testCertFiles,
	"CertLocks":                  testCertLocks,
}

// testCertFiles: a file is found as it was put, secret or not, binary or
// not; a put replaces; a list is the files at and under a prefix, not
// those that merely begin alike; a delete takes the file and everything
// under it.
func testCertFiles(t *testing.T, s Store) {
	ctx := context.Background()
	files := []*switchboard.CertFile{
		{Key: "certificates/ca/a.example/a.example.crt", Value: []byte("-----BEGIN CERTIFICATE-----\nA\n")},
		{Key: "certificates/ca/a.example/a.example.key", Value: []byte("-----BEGIN EC PRIVATE KEY-----\nK\n"), Secret: true},
		{Key: "certificates/ca/a.example/a.example.json", Value: []byte(`{"sans":["a.example"]}`)},
		{Key: "certificates/ca/a.examplex/a.examplex.crt", Value: []byte("other")},
		{Key: "ocsp/a.example-1", Value: []byte{0, 1, 2, 0xff, 0xfe}},
		{Key: "empty", Value: []byte{}},
	}
	for _, f := range files {
		before := time.Now().Add(-time.Second)
		must(t, s.PutCertFile(ctx, f))
		if f.Modified.Before(before) {
			t.Fatalf("%s: Modified %v not set", f.Key, f.Modified)
		}
	}
	for _, want := range files {
		got, err := s.FindCertFile(ctx, want.Key)
		must(t, err)
		if string(got.Value) != string(want.Value) || got.Secret != want.Secret || got.Key != want.Key || !got.Modified.Equal(want.Modified) {
			t.Fatalf("found %+v, want %+v", got, want)
		}
	}
	_, err := s.FindCertFile(ctx, "certificates/ca/a.example")
	wantCode(t, err, switchboard.ENOTFOUND)

	replaced := &switchboard.CertFile{Key: files[0].Key, Value: []byte("renewed")}
	must(t, s.PutCertFile(ctx, replaced))
	if got, err := s.FindCertFile(ctx, files[0].Key); err != nil || string(got.Value) != "renewed" {
		t.Fatalf("after a put: %+v %v", got, err)
	}

	list := func(prefix string, want ...string) {
		t.Helper()
		got, err := s.ListCertFiles(ctx, prefix)
		must(t, err)
		if !slices.Equal(got, want) {
			t.Fatalf("list %q = %q, want %q", prefix, got, want)
		}
	}
	list("certificates/ca/a.example", files[0].Key, files[2].Key, files[1].Key)
	list(files[1].Key, files[1].Key)
	list("certificates/ca/a.exam")
	list("nothing")
	list("certificates", files[0].Key, files[2].Key, files[1].Key, files[3].Key)
	_, err = s.ListCertFiles(ctx, "")
	wantCode(t, err, switchboard.EINVALID)

	// A key that begins like another's directory is not under it.
	must(t, s.PutCertFile(ctx, &switchboard.CertFile{Key: "certificates/ca/a.example-x", Value: []byte("x")}))
	must(t, s.PutCertFile(ctx, &switchboard.CertFile{Key: "certificates/ca/a.example.y/z", Value: []byte("y")}))
	list("certificates/ca/a.example", files[0].Key, files[2].Key, files[1].Key)
	must(t, s.DeleteCertFiles(ctx, "certificates/ca/a.example"))
	must(t, s.DeleteCertFiles(ctx, "certificates/ca/a.example"))
	list("certificates", "certificates/ca/a.example-x", "certificates/ca/a.example.y/z", files[3].Key)
	must(t, s.DeleteCertFiles(ctx, "empty"))
	list("empty")
	list("ocsp", "ocsp/a.example-1")
	wantCode(t, s.DeleteCertFiles(ctx, ""), switchboard.EINVALID)
}

// testCertLocks: a lock is its holder's until it releases it or lets it
// expire; another takes over an expired one, and the first then cannot
// renew it or release it.
func testCertLocks(t *testing.T, s Store) {
	ctx := context.Background()
	took := func(name, holder string, ttl time.Duration, want bool) {
		t.Helper()
		got, err := s.TryLockCert(ctx, name, holder, ttl)
		must(t, err)
		if got != want {
			t.Fatalf("%s takes %s: %v, want %v", holder, name, got, want)
		}
	}
	took("issue_cert_a.example", "h1", time.Minute, true)
	took("issue_cert_a.example", "h2", time.Minute, false)
	took("issue_cert_b.example", "h2", time.Minute, true) // locks are per name
	took("issue_cert_a.example", "h1", time.Minute, true) // its own, again
	must(t, s.RenewCertLock(ctx, "issue_cert_a.example", "h1", time.Minute))
	wantCode(t, s.RenewCertLock(ctx, "issue_cert_a.example", "h2", time.Minute), switchboard.ECONFLICT)
	must(t, s.UnlockCert(ctx, "issue_cert_a.example", "h2")) // not its: nothing happens
	took("issue_cert_a.example", "h2", time.Minute, false)
	must(t, s.UnlockCert(ctx, "issue_cert_a.example", "h1"))
	took("issue_cert_a.example", "h2", time.Minute, true)

	// An expired lock is taken over; its former holder has lost it.
	took("issue_cert_c.example", "h1", -time.Second, true)
	took("issue_cert_c.example", "h2", time.Minute, true)
	wantCode(t, s.RenewCertLock(ctx, "issue_cert_c.example", "h1", time.Minute), switchboard.ECONFLICT)
	must(t, s.UnlockCert(ctx, "issue_cert_c.example", "h1"))
	took("issue_cert_c.example", "h1", time.Minute, false)
}
