-- The certificate manager's files (package certs: certificates, their
-- metadata, the ACME account), kept here so that every instance of a
-- deployment serves the same certificate and only one asks the CA. A
-- private key is kept sealed, in sealed, with its value empty; any other
-- file is kept as it is, in value. modified_at is nanoseconds since 1970.
-- Keys compare byte by byte (COLLATE "C", as SQLite's BINARY), so that the
-- files under a key are one range of the primary key.
CREATE TABLE cert_files (
	key         TEXT    COLLATE "C" PRIMARY KEY,
	value       BYTEA   NOT NULL,
	sealed      TEXT    NOT NULL DEFAULT '',
	size        BIGINT  NOT NULL,
	modified_at BIGINT  NOT NULL
);
-- A lock of the certificate manager (obtaining or renewing one name's
-- certificate, say), held by one process of the deployment until it
-- releases it or until expires_at, which its holder moves on while it
-- lives: another process takes over a lock whose holder died once it
-- expired.
CREATE TABLE cert_locks (
	name       TEXT   PRIMARY KEY,
	holder     TEXT   NOT NULL,
	expires_at BIGINT NOT NULL
);
