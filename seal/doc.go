// Package seal encrypts the secrets the server keeps in order to send them
// later: webhook signing secrets, wake keys and HMAC secrets, push
// notification tokens and credentials, and upstream credentials. Tokens
// that callers present are never among them: those are stored as hashes.
//
// A Keyring holds the server's keys: the current one, which seals, and
// older ones, which still open what they sealed until the store has
// sealed it again under the current key (rotation). A sealed value is
// text, "sb1.<key id>.<base64url of nonce and ciphertext>", sealed with
// AES-256-GCM; the purpose of the value (which column it is) is bound in
// as additional data, so a sealed value copied into another column does
// not open. A value without the prefix is one written before sealing
// existed, and opens as itself until it is sealed again.
//
// The keys come from the environment (SWITCHBOARD_SECRET_KEY) or from a key
// file in the data directory, mode 0600, made at first start (keyfile.go).
package seal
