package auth

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// RefreshTokenPrefix starts every refresh token, so secret scanners can find leaked ones and a
// refresh token sent as Bearer is told from an access token.
const RefreshTokenPrefix = "arbrt_"

// RefreshTokenLifetime is how long a refresh token may be traded for access tokens: a month,
// after which the command line asks its person to sign in again.
const RefreshTokenLifetime = 30 * 24 * time.Hour

// NewRefreshToken returns a refresh token for the row id, "arbrt_<id without dashes>_<256-bit
// secret>", and the hash of its secret that is stored.
func NewRefreshToken(id uuid.UUID) (token string, secretHash []byte) {
	secret := RandomToken(32)
	return RefreshTokenPrefix + strings.ReplaceAll(id.String(), "-", "") + "_" + secret, HashAPIKeySecret(secret)
}

// ParseRefreshToken splits a refresh token into its row id and secret; ok is false when the
// text is not shaped like one.
func ParseRefreshToken(token string) (id uuid.UUID, secret string, ok bool) {
	rest, found := strings.CutPrefix(token, RefreshTokenPrefix)
	if !found {
		return uuid.Nil, "", false
	}
	return ParseAPIKey(APIKeyPrefix + rest)
}
