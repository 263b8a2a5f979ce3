package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Sealer encrypts the secrets the store keeps for the server to send
// later (seal.Keyring is the one the server uses). The purpose names the
// column a value is kept in and is bound into the seal.
type Sealer interface {
	// Seal encrypts plain; the empty string stays empty.
	Seal(purpose, plain string) (string, error)
	// Open decrypts a sealed value; a value that is not sealed (kept
	// before sealing existed) opens as itself.
	Open(purpose, sealed string) (string, error)
	// CurrentPrefix returns how every value sealed with the key that seals
	// now begins: a stored value that begins otherwise is sealed again by
	// ResealSecrets.
	CurrentPrefix() string
}

// The secrets the store keeps sealed, each named by its column. Tokens that
// callers present are not among them: those are kept as hashes.
const (
	purposeWebhookSecret    = "agents.webhook_secret"
	purposeWakeKey          = "wake_configs.wake_key"
	purposeWakeHMAC         = "wake_configs.hmac_secret"
	purposePushConfig       = "push_configs.data"      // the URL, token and credentials of a push configuration
	purposeFrontCredentials = "fronts.credentials"     // the owner's credentials for a front's upstream
	purposeFrontUpstream    = "fronts.upstream"        // a front's upstream URL, which may hold a key in its query
	purposeFrontCardURL     = "fronts.card_url"        // the URL of its card, on the same origin
	purposePublishedTarget  = "published_cards.target" // a forwarding connector's local server, which may hold a key in its query
	// purposeOutboundPeerColumn is the column of synced aliases' peer
	// tokens; each is sealed for its row (purposeOutboundPeerToken).
	purposeOutboundPeerColumn = "outbound_peers.token"
)

// sealedColumn is a column of sealed values, with the key of its rows.
type sealedColumn struct {
	table, column string
	key           []string // the columns of the table's primary key
	// purpose, if set, is the purpose of a row's value, from its key;
	// otherwise it is "table.column".
	purpose func(key []string) string
	// replaceable says a value the owner can upload again (a synced
	// alias's token): one that does not open is left as it is, for the
	// owner to replace (or for a restart with the keys that sealed it),
	// instead of stopping the server.
	replaceable bool
}

// sealedColumns are the columns ResealSecrets goes over; the purpose of
// each is "table.column".
var sealedColumns = []sealedColumn{
	{"agents", "webhook_secret", []string{"id"}, nil, false},
	{"wake_configs", "wake_key", []string{"agent_id"}, nil, false},
	{"wake_configs", "hmac_secret", []string{"agent_id"}, nil, false},
	{"push_configs", "data", []string{"task_id", "id"}, nil, false},
	{"fronts", "credentials", []string{"agent_id"}, nil, false},
	{"fronts", "upstream", []string{"agent_id"}, nil, false},
	{"fronts", "card_url", []string{"agent_id"}, nil, false},
	{"published_cards", "target", []string{"agent_id"}, nil, false},
	{"outbound_peers", "token", []string{"agent_id", "alias"},
		func(key []string) string { return purposeOutboundPeerToken(key[0], key[1]) }, true},
	{"cert_files", "sealed", []string{"key"}, func(key []string) string { return purposeCertFile(key[0]) }, false},
}

// seal seals v for purpose, or returns it as it is without a Sealer.
func (db *DB) seal(purpose, v string) (string, error) {
	if db.Secrets == nil {
		return v, nil
	}
	out, err := db.Secrets.Seal(purpose, v)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", purpose, err)
	}
	return out, nil
}

// open opens v for purpose, or returns it as it is without a Sealer.
func (db *DB) open(purpose, v string) (string, error) {
	if db.Secrets == nil {
		return v, nil
	}
	out, err := db.Secrets.Open(purpose, v)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", purpose, err)
	}
	return out, nil
}

// openAgent opens the sealed fields of an agent read from its row.
func (db *DB) openAgent(g *switchboard.Agent) error {
	var err error
	g.WebhookSecret, err = db.open(purposeWebhookSecret, g.WebhookSecret)
	return err
}

// resealBatch bounds the rows ResealSecrets rewrites in one transaction.
const resealBatch = 200

// ResealSecrets seals again, with the key that seals now, every secret the
// store keeps that is not sealed with it: those kept before sealing
// existed, and those sealed with an older key (a rotation). It returns how
// many it sealed again. A secret sealed with a key the Sealer does not
// hold fails it (the error wraps seal's UnknownKeyError): the server was
// given other keys than the ones that sealed what the store keeps, and
// must not start without them; but a synced alias's token, which its owner
// can upload again, is left as it is (it reads as Unreadable). It does
// nothing without a Sealer. Several
// instances may run it at once: each row is rewritten in a transaction
// that checks it still holds the value read.
func (db *DB) ResealSecrets(ctx context.Context) (int, error) {
	if db.Secrets == nil {
		return 0, nil
	}
	total := 0
	for _, c := range sealedColumns {
		skipped := 0 // values left as they are, which sort first among those still stale
		for {
			n, left, more, err := db.resealColumn(ctx, c, skipped)
			total += n
			skipped += left
			if err != nil {
				return total, err
			}
			if !more {
				break
			}
		}
	}
	return total, nil
}

// staleRow is a row whose sealed value is not current.
type staleRow struct {
	key     []any
	value   string
	purpose string // what it is sealed for
}

// staleRows reads up to resealBatch values of one column that do not begin
// with prefix (not sealed with the current key), after the first skip of
// them in key order, with their keys and purposes.
func (db *DB) staleRows(ctx context.Context, c sealedColumn, prefix string, skip int) ([]staleRow, error) {
	keys := strings.Join(c.key, ", ")
	rows, err := db.read.QueryContext(ctx, `SELECT `+keys+`, `+c.column+` FROM `+c.table+
		` WHERE `+c.column+` <> '' AND substr(`+c.column+`, 1, $1) <> $2 ORDER BY `+keys+
		` LIMIT `+strconv.Itoa(resealBatch)+` OFFSET `+strconv.Itoa(skip),
		len(prefix), prefix)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var stale []staleRow
	for rows.Next() {
		key := make([]string, len(c.key))
		dest := make([]any, 0, len(c.key)+1)
		for i := range key {
			dest = append(dest, &key[i])
		}
		var r staleRow
		if err := rows.Scan(append(dest, &r.value)...); err != nil {
			return nil, err
		}
		r.purpose = c.table + "." + c.column
		if c.purpose != nil {
			r.purpose = c.purpose(key)
		}
		r.key = make([]any, len(key))
		for i, k := range key {
			r.key[i] = k
		}
		stale = append(stale, r)
	}
	return stale, rows.Err()
}

// resealColumn seals again up to resealBatch values of one column that are
// not sealed with the current key, after the first skip of them (in key
// order), and reports how many it left as they are (a replaceable column's
// values that do not open) and whether there may be more.
func (db *DB) resealColumn(ctx context.Context, c sealedColumn, skip int) (n, left int, more bool, err error) {
	stale, err := db.staleRows(ctx, c, db.Secrets.CurrentPrefix(), skip)
	if err != nil {
		return 0, 0, false, err
	}
	cond := ""
	for i, k := range c.key {
		cond += fmt.Sprintf(" AND %s = $%d", k, i+3)
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, left = 0, 0 // a transaction run again counts again
		for _, r := range stale {
			plain, err := db.Secrets.Open(r.purpose, r.value)
			if err != nil && c.replaceable {
				left++
				continue
			} else if err != nil {
				return fmt.Errorf("%s.%s: %w", c.table, c.column, err)
			}
			sealed, err := db.Secrets.Seal(r.purpose, plain)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", c.table, c.column, err)
			}
			// The value read is part of the condition: a row another
			// instance sealed (or the owner changed) meanwhile is left alone.
			res, err := tx.ExecContext(ctx, `UPDATE `+c.table+` SET `+c.column+` = $1 WHERE `+c.column+` = $2`+cond,
				append([]any{sealed, r.value}, r.key...)...)
			if err != nil {
				return err
			}
			if k, err := res.RowsAffected(); err == nil {
				n += int(k)
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, false, err
	}
	return n, left, len(stale) == resealBatch, nil
}
