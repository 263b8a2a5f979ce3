package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// prefix starts every sealed value (format version 1).
const prefix = "sb1."

// Keyring seals with its current key and opens with any of its keys. It is
// safe for concurrent use.
type Keyring struct {
	current string                 // id of the current key
	aeads   map[string]cipher.AEAD // by key id
	ids     []string               // current first
}

// NewKeyring returns a keyring whose current key is keys[0]; the others
// only open. Each key is KeySize bytes.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	k := &Keyring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, key := range keys {
		if len(key) != KeySize {
			return nil, fmt.Errorf("seal: key %d is %d bytes, want %d", i+1, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		id := KeyID(key)
		if _, dup := k.aeads[id]; dup {
			continue
		}
		k.aeads[id] = aead
		k.ids = append(k.ids, id)
	}
	k.current = k.ids[0]
	return k, nil
}

// KeyID names a key: the first 8 hex digits of its SHA-256. It is stored
// with each sealed value, so the key that opens it is known.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// NewKey returns a new random key.
func NewKey() []byte {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return key
}

// CurrentID returns the id of the key that seals.
func (k *Keyring) CurrentID() string { return k.current }

// IDs returns the ids of every key, the current one first.
func (k *Keyring) IDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plain for purpose (the name of where it is kept, such as
// "agents.webhook_secret") with the current key. The empty string stays
// empty: there is nothing to hide, and "no secret" must stay visible.
func (k *Keyring) Seal(purpose, plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return prefix + k.current + "." + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal made for purpose, with whichever key sealed
// it. A value that is not sealed (written before sealing existed) is
// returned as it is. It fails for a value sealed with a key the keyring
// does not hold (ErrUnknownKey), or one altered or sealed for another
// purpose.
func (k *Keyring) Open(purpose, sealed string) (string, error) {
	if !IsSealed(sealed) {
		return sealed, nil
	}
	id, body, _ := strings.Cut(strings.TrimPrefix(sealed, prefix), ".")
	aead, ok := k.aeads[id]
	if !ok {
		return "", &UnknownKeyError{ID: id}
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", fmt.Errorf("seal: a sealed %s is malformed", purpose)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return "", fmt.Errorf("seal: a sealed %s does not open (altered, or sealed for another use)", purpose)
	}
	return string(plain), nil
}

// Current reports whether v needs no sealing again: empty, or sealed with
// the current key.
func (k *Keyring) Current(v string) bool {
	return v == "" || strings.HasPrefix(v, k.CurrentPrefix())
}

// CurrentPrefix returns how every value sealed with the current key begins.
func (k *Keyring) CurrentPrefix() string { return prefix + k.current + "." }

// IsSealed reports whether v is a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, prefix) }

// UnknownKeyError is Open's failure for a value sealed with a key the
// keyring does not hold: the server was given another key than the one
// that sealed what the store keeps.
type UnknownKeyError struct {
	ID string // the id of the key that sealed the value
}

// Error implements the error interface.
func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("seal: a secret is sealed with key %s, which this server does not have", e.ID)
}
