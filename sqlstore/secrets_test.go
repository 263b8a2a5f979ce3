package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

// The secrets a deployment keeps for the server to send later, each with a
// value that must never appear in the database as it is.
const (
	webhookSecret = "sbw_webhook-secret-0123456789"
	wakeKey       = "wake-key-0123456789abcdef"
	wakeHMAC      = "wake-hmac-0123456789abcdef"
	pushToken     = "push-token-0123456789abcdef"
	pushCreds     = "push-credentials-0123456789"
	certKey       = "cert-private-key-0123456789"
	certKeyPath   = "certificates/ca/a.example/a.example.key"
)

// secretsFixture writes one of each secret through the store's interfaces.
func secretsFixture(t *testing.T, db *sqlstore.DB) (*switchboard.Agent, a2a.TaskID) {
	t.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "hooked", Mode: switchboard.ModeWebhook,
		Endpoint: "https://hook.example", WebhookSecret: webhookSecret, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	now := time.Now().UTC()
	must(t, db.SaveWakeConfig(ctx, &switchboard.WakeConfig{AgentID: g.ID, URL: "https://wake.example", Key: wakeKey,
		HMACSecret: wakeHMAC, Preset: wake.PresetHermes, KeyHeader: "Authorization", KeyPrefix: "Bearer ",
		OpenClawAgentID: "main", CLICommand: "switchboard", CreatedAt: now, UpdatedAt: now}))
	id := a2a.TaskID(switchboard.NewID())
	msg := &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, TaskID: id, ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}
	task := &switchboard.Task{A2A: a2a.Task{ID: id, ContextID: "c1", History: []*a2a.Message{msg},
		Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}},
		AgentID: g.ID, PeerID: "p1", PeerLabel: "bob", Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
	_, err := db.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: "m1", PushConfig: &switchboard.PushConfig{
		Config: a2a.PushConfig{TaskID: id, ID: "cfg", URL: "https://peer.example/push", Token: pushToken,
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: pushCreds}}, Protocol: switchboard.ProtocolV1, CreatedAt: now}})
	must(t, err)
	must(t, db.PutCertFile(ctx, &switchboard.CertFile{Key: certKeyPath, Value: []byte(certKey), Secret: true}))
	return g, id
}

// readSecrets reads every secret back through the store.
func readSecrets(t *testing.T, db *sqlstore.DB, g *switchboard.Agent, id a2a.TaskID) error {
	t.Helper()
	ctx := context.Background()
	got, err := db.FindAgentByID(ctx, g.ID)
	if err != nil {
		return err
	}
	wc, err := db.FindWakeConfig(ctx, g.ID)
	if err != nil {
		return err
	}
	pc, err := db.FindPushConfig(ctx, id, "cfg")
	if err != nil {
		return err
	}
	key, err := db.FindCertFile(ctx, certKeyPath)
	if err != nil {
		return err
	}
	if got.WebhookSecret != webhookSecret || wc.Key != wakeKey || wc.HMACSecret != wakeHMAC ||
		pc.Config.Token != pushToken || pc.Config.Auth == nil || pc.Config.Auth.Credentials != pushCreds ||
		string(key.Value) != certKey || !key.Secret {
		t.Fatalf("secrets read back: %q %q %q %q %+v %+v", got.WebhookSecret, wc.Key, wc.HMACSecret, pc.Config.Token, pc.Config.Auth, key)
	}
	return nil
}

// plainSecrets returns the secrets that appear as they are in an export of
// db: what anyone holding the database (or a dump of it) could read.
func plainSecrets(t *testing.T, db *sqlstore.DB) []string {
	t.Helper()
	var buf bytes.Buffer
	_, err := db.Export(context.Background(), &buf)
	must(t, err)
	var found []string
	for _, s := range []string{webhookSecret, wakeKey, wakeHMAC, pushToken, pushCreds, certKey} {
		if strings.Contains(buf.String(), s) {
			found = append(found, s)
		}
	}
	return found
}

func testSecretsAtRest(t *testing.T, open func(t *testing.T) *sqlstore.DB) {
	oldKey, newKey := seal.NewKey(), seal.NewKey()
	ctx := context.Background()

	// Kept before sealing existed: as they are.
	db := open(t)
	g, id := secretsFixture(t, db)
	if got := plainSecrets(t, db); len(got) != 6 {
		t.Fatalf("without a sealer, %d of 6 secrets are kept as they are", len(got))
	}

	// With a key: read as before, sealed again at once, and never kept
	// as they are, also in the export.
	old, _ := seal.NewKeyring(oldKey)
	db.Secrets = old
	must(t, readSecrets(t, db, g, id))
	n, err := db.ResealSecrets(ctx)
	if err != nil || n != 5 { // the webhook secret, the wake key and hmac secret, the push configuration, the certificate's key
		t.Fatalf("ResealSecrets = %d, %v; want 5", n, err)
	}
	if n, err := db.ResealSecrets(ctx); n != 0 || err != nil {
		t.Fatalf("a second ResealSecrets = %d, %v; want nothing to do", n, err)
	}
	if got := plainSecrets(t, db); len(got) != 0 {
		t.Fatalf("secrets kept as they are after sealing: %v", got)
	}
	must(t, readSecrets(t, db, g, id))
	// New secrets are sealed as they are written.
	g2 := &switchboard.Agent{ID: switchboard.NewID(), AccountID: g.AccountID, Handle: "hooked-2", Mode: switchboard.ModeWebhook,
		Endpoint: "https://hook.example", WebhookSecret: webhookSecret, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g2))
	if got := plainSecrets(t, db); len(got) != 0 {
		t.Fatalf("a new agent's secret is kept as it is: %v", got)
	}

	// Rotation: the new key seals, the old one still opens, and a reseal
	// leaves nothing under the old key.
	rotated, _ := seal.NewKeyring(newKey, oldKey)
	db.Secrets = rotated
	must(t, readSecrets(t, db, g, id))
	if n, err := db.ResealSecrets(ctx); err != nil || n != 6 {
		t.Fatalf("ResealSecrets after rotation = %d, %v; want 6", n, err)
	}
	onlyNew, _ := seal.NewKeyring(newKey)
	db.Secrets = onlyNew
	must(t, readSecrets(t, db, g, id))

	// A server given other keys than the ones that sealed what is kept
	// reads none of it, and says which key it lacks.
	stranger, _ := seal.NewKeyring(seal.NewKey())
	db.Secrets = stranger
	var unknown *seal.UnknownKeyError
	if _, err := db.ResealSecrets(ctx); !errors.As(err, &unknown) || unknown.ID != seal.KeyID(newKey) {
		t.Fatalf("ResealSecrets with a foreign key: %v", err)
	}
	if err := readSecrets(t, db, g, id); !errors.As(err, &unknown) {
		t.Fatalf("reading with a foreign key: %v", err)
	}
}

func TestSQLiteSecretsAtRest(t *testing.T) {
	testSecretsAtRest(t, func(t *testing.T) *sqlstore.DB {
		db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(t))
		must(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

func TestPostgresSecretsAtRest(t *testing.T) {
	testSecretsAtRest(t, func(t *testing.T) *sqlstore.DB { return MustOpenPostgres(t) })
}
