// Package secretbox seals the secrets agentline stores (a project's
// provider keys) with AES-256-GCM under AGENTLINE_ENCRYPTION_KEY, so that a
// copy of the database alone reveals none of them.
//
// A sealed value is "v1:<key id>:<base64 of nonce and ciphertext>". The key
// id (the start of the key's SHA-256) says which key of the rotating list
// sealed it: the first key seals, every key opens, and Reseal moves a value
// to the first key. Each value is sealed with a context (its row's
// identity) as additional data, so a sealed value copied to another row
// does not open there.
package secretbox

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

	"github.com/agentline/agentline"
)

const version = "v1"

// Box seals with its first key and opens with any of its keys. A nil Box
// has no key: it refuses to seal or open, with a message that says which
// setting is missing.
type Box struct {
	keys []key
}

type key struct {
	id   string
	aead cipher.AEAD
}

// New makes a Box of keys (32 bytes each; the first seals).
func New(keys [][]byte) (*Box, error) {
	if len(keys) == 0 {
		return nil, errors.New("secretbox: no key")
	}
	b := &Box{}
	for i, k := range keys {
		if len(k) != agentline.EncryptionKeySize {
			return nil, fmt.Errorf("secretbox: key %d is %d bytes, not %d", i+1, len(k), agentline.EncryptionKeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		b.keys = append(b.keys, key{id: KeyID(k), aead: aead})
	}
	return b, nil
}

// KeyID names a key without revealing it: the first 8 hex digits of its
// SHA-256.
func KeyID(k []byte) string {
	sum := sha256.Sum256(k)
	return hex.EncodeToString(sum[:4])
}

// ErrNoKey is the error of a nil Box: no AGENTLINE_ENCRYPTION_KEY in
// production. It says what to do.
var ErrNoKey = agentline.Errorf(agentline.ENotConfigured,
	"AGENTLINE_ENCRYPTION_KEY is not set: this server cannot store or read secrets such as provider keys (see docs/deploy.md)")

// Seal encrypts plaintext under the first key, bound to context.
func (b *Box) Seal(plaintext, context string) (string, error) {
	if b == nil {
		return "", ErrNoKey
	}
	k := b.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secretbox: nonce: %w", err)
	}
	out := k.aead.Seal(nonce, nonce, []byte(plaintext), []byte(context))
	return version + ":" + k.id + ":" + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal made with any of the keys, under the same
// context. Its errors never include the value.
func (b *Box) Open(sealed, context string) (string, error) {
	if b == nil {
		return "", ErrNoKey
	}
	id, data, err := parse(sealed)
	if err != nil {
		return "", err
	}
	for _, k := range b.keys {
		if k.id != id {
			continue
		}
		n := k.aead.NonceSize()
		if len(data) < n+k.aead.Overhead() {
			return "", errors.New("secretbox: sealed value is too short")
		}
		plain, err := k.aead.Open(nil, data[:n], data[n:], []byte(context))
		if err != nil {
			return "", fmt.Errorf("secretbox: a value sealed with key %s does not open (damaged, or moved from another row)", id)
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("secretbox: the value was sealed with key %s, which AGENTLINE_ENCRYPTION_KEY does not list (keys listed: %s)", id, b.ids())
}

// Reseal opens sealed and seals it again under the first key; a value
// already sealed under it is returned as it is (changed false), which makes
// a rotation that is run twice, or stopped and run again, harmless.
func (b *Box) Reseal(sealed, context string) (out string, changed bool, err error) {
	if b == nil {
		return "", false, ErrNoKey
	}
	if id, _, err := parse(sealed); err == nil && id == b.keys[0].id {
		if _, err := b.Open(sealed, context); err != nil {
			return "", false, err
		}
		return sealed, false, nil
	}
	plain, err := b.Open(sealed, context)
	if err != nil {
		return "", false, err
	}
	out, err = b.Seal(plain, context)
	return out, err == nil, err
}

// SealingKeyID is the id of the key that seals.
func (b *Box) SealingKeyID() string {
	if b == nil {
		return ""
	}
	return b.keys[0].id
}

func (b *Box) ids() string {
	ids := make([]string, len(b.keys))
	for i, k := range b.keys {
		ids[i] = k.id
	}
	return strings.Join(ids, ", ")
}

func parse(sealed string) (id string, data []byte, err error) {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != version || len(parts[1]) != 8 {
		return "", nil, errors.New("secretbox: not a sealed value")
	}
	data, err = base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil {
		return "", nil, errors.New("secretbox: sealed value is not base64")
	}
	return parts[1], data, nil
}
