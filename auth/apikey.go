package auth

import (
	"crypto/sha256"
	"strings"

	"github.com/google/uuid"
)

// APIKeyPrefix starts every Arbiter API key, so a Bearer token is recognised as one (and
// secret scanners can find leaked keys).
const APIKeyPrefix = "arb_"

// NewAPIKey returns a key for the key row id: the token shown once to the admin, and the hash
// of its secret that is stored. The token is "arb_<id without dashes>_<256-bit secret>".
func NewAPIKey(id uuid.UUID) (token string, secretHash []byte) {
	secret := RandomToken(32)
	return APIKeyPrefix + strings.ReplaceAll(id.String(), "-", "") + "_" + secret, HashAPIKeySecret(secret)
}

// ParseAPIKey splits a token into its key id and secret; ok is false when the token is not
// shaped like an Arbiter API key.
func ParseAPIKey(token string) (id uuid.UUID, secret string, ok bool) {
	rest, found := strings.CutPrefix(token, APIKeyPrefix)
	if !found {
		return uuid.Nil, "", false
	}
	idPart, secret, found := strings.Cut(rest, "_")
	if !found || secret == "" {
		return uuid.Nil, "", false
	}
	id, err := uuid.Parse(idPart)
	if err != nil {
		return uuid.Nil, "", false
	}
	return id, secret, true
}

// HashAPIKeySecret hashes a key's secret. The secret is 256 random bits, so a plain SHA-256 is
// enough (a slow password hash protects guessable secrets, which these are not).
func HashAPIKeySecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
