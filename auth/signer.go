package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
)

// Signer makes and checks HMAC-SHA256 signatures under one key that every replica shares.
// Each use signs under its own label (access tokens, the sign-in form's token, the bulk
// change's flash), so that a signature made for one use never passes for another.
type Signer struct{ key []byte }

// NewSigner signs with key; an empty key is replaced by a random one for this process only
// (tests, and a single replica that keeps no key).
func NewSigner(key []byte) Signer {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return Signer{key: key}
}

// Sum is the signature of the parts, in order, under label.
func (s Signer) Sum(label string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// Verify reports whether sum is the signature of the parts under label, in constant time.
func (s Signer) Verify(sum []byte, label string, parts ...[]byte) bool {
	return hmac.Equal(sum, s.Sum(label, parts...))
}
