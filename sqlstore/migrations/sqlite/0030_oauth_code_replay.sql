-- An authorization code is kept once redeemed, marked used, until a day
-- after it expired: a second redemption (RFC 6749 section 4.1.2) is
-- refused and ends the grant issued from the first, which records the
-- code it came from. replayed_at marks a code presented again before the
-- grant of its first use was stored: that grant is then refused.
ALTER TABLE oauth_codes ADD COLUMN used_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE oauth_codes ADD COLUMN replayed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE oauth_grants ADD COLUMN code_hash TEXT NOT NULL DEFAULT '';
CREATE INDEX oauth_grants_code ON oauth_grants (code_hash);
-- A client with a code is in use: it is not pruned as unused.
CREATE INDEX oauth_codes_client ON oauth_codes (client_id);
