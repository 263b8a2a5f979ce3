// Package certs gives the server its TLS certificates, so that it serves
// HTTPS itself, with no proxy in front (docs/deploying.md, docs/security.md).
//
// Manager obtains and renews certificates over ACME with certmagic: the
// deployment's own names (serve --domain) at start, by the HTTP-01 and
// TLS-ALPN-01 challenges, which the server's own listeners answer; and
// agents' domains on demand, at the first TLS handshake for the name,
// only when the decision allows it (an agent of the deployment holds the
// name, the name resolves to the deployment's addresses, and the instance
// is within its limit of new certificates). Any other name gets no
// certificate and costs the CA nothing: its handshake fails. Two certmagic
// configs share one cache: one for the deployment's names, without
// on-demand, and one for every other name, with it (a config with
// on-demand set manages every name on demand, its own too).
//
// Storage is certmagic's storage on the server's store
// (switchboard.CertStore, in SQLite or PostgreSQL): every instance of a
// deployment sees the same certificates, takes the same locks (rows with a
// holder and an expiry, kept alive while held), and only one asks the CA
// for each name. Private keys (certificates' and the ACME account's) are
// sealed at rest with the server's keyring, like every other secret.
//
// FileCert serves a certificate the operator keeps in files instead
// (serve --tls-cert, --tls-key), taking a new pair without a restart.
//
// HSTS and Redirect are the HTTP side: Strict-Transport-Security on HTTPS
// responses; on plain HTTP, the ACME challenges, requests from loopback
// served as they are, every other request redirected to https (308).
//
// Logging. certmagic logs through zap; its logger here is a small
// zapcore.Core that hands every entry to the server's slog handler
// (log.go): its info lines at debug, its warnings and errors at warn, all
// with component=certmagic. The events that matter to an operator come
// through certmagic's OnEvent hook instead and get lines of their own
// (status.go): a certificate being obtained and obtained at info, a
// failure at error with its reason, cause and fix (classify.go reads the
// ACME problem types: DNS, connection, unauthorized, rate limited, ... or a
// CA that cannot be reached). Both, rather than zap.NewNop and the hook
// alone, so that certmagic's own detail is there at --log-level debug
// when the classified line is not enough.
package certs
