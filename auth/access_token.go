package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AccessTokenPrefix starts every short-lived access token of /api/v1/token and /api/v2/token,
// so the authentication middleware tells one from an API key ("arb_") or an OIDC token, and
// secret scanners can find leaked ones.
const AccessTokenPrefix = "arbat_"

// AccessTokenLifetime is how long an access token is accepted after it is issued (expires_in
// of /api/v2/token). An hour, as Run:ai's own tokens: long enough for a script, short enough
// that a leaked token is soon useless.
const AccessTokenLifetime = time.Hour

// What an access token stands for.
const (
	TokenForAPIKey = 'k' // the API key whose client credentials were presented
	TokenForUser   = 'u' // the local account whose password was presented
)

// accessTokenLabel separates this signature from any other made with the same key.
const accessTokenLabel = "arbiter access token v1\x00"

// Access tokens are signed, not stored (docs/security.md "Access tokens"): version, what the
// token stands for, its id, the expiry in Unix seconds and a random nonce, then the
// HMAC-SHA256 of all of it under the server's key, base64url without padding.
const (
	tokenVersion  = 1
	tokenNonceLen = 8
	tokenBodyLen  = 1 + 1 + 16 + 8 + tokenNonceLen
)

// ErrAccessToken says a token is not one this server issued, or has expired; the caller answers
// 401 without telling which.
var ErrAccessToken = errors.New("the access token is not valid")

// AccessTokens issues and checks access tokens under one key that every replica shares.
type AccessTokens struct{ signer Signer }

// NewAccessTokens signs with key; an empty key is replaced by a random one for this process
// only (tests; a single replica that keeps no key).
func NewAccessTokens(key []byte) AccessTokens {
	return AccessTokens{signer: NewSigner(key)}
}

// Issue returns a token for (kind, id) valid until expires.
func (a AccessTokens) Issue(kind byte, id uuid.UUID, expires time.Time) string {
	var nonce [tokenNonceLen]byte
	_, _ = rand.Read(nonce[:])
	return a.IssueStamped(kind, id, expires, nonce)
}

// IssueStamped is Issue with stamp in place of the random nonce: a key's token carries a
// fingerprint of the key's secret, so that regenerating the secret ends the tokens issued
// for the old one (the checker compares CheckStamped's stamp with the key's).
func (a AccessTokens) IssueStamped(kind byte, id uuid.UUID, expires time.Time, stamp [tokenNonceLen]byte) string {
	body := make([]byte, tokenBodyLen)
	body[0], body[1] = tokenVersion, kind
	copy(body[2:18], id[:])
	binary.BigEndian.PutUint64(body[18:26], uint64(expires.Unix()))
	copy(body[26:], stamp[:])
	return AccessTokenPrefix + base64.RawURLEncoding.EncodeToString(append(body, a.signer.Sum(accessTokenLabel, body)...))
}

// IsAccessToken says whether token is shaped like an access token (it may still be invalid).
func IsAccessToken(token string) bool { return strings.HasPrefix(token, AccessTokenPrefix) }

// Check returns what a token this server issued stands for, if it has not expired at now.
func (a AccessTokens) Check(token string, now time.Time) (kind byte, id uuid.UUID, expires time.Time, err error) {
	kind, id, expires, _, err = a.CheckStamped(token, now)
	return kind, id, expires, err
}

// CheckStamped is Check that also returns the token's stamp (IssueStamped; random for Issue).
func (a AccessTokens) CheckStamped(token string, now time.Time) (kind byte, id uuid.UUID, expires time.Time, stamp [tokenNonceLen]byte, err error) {
	rest, ok := strings.CutPrefix(token, AccessTokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBodyLen+sha256.Size) {
		return 0, uuid.Nil, time.Time{}, stamp, ErrAccessToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest) // strict: one spelling per token
	if err != nil || len(b) != tokenBodyLen+sha256.Size {
		return 0, uuid.Nil, time.Time{}, stamp, ErrAccessToken
	}
	body, sum := b[:tokenBodyLen], b[tokenBodyLen:]
	if !a.signer.Verify(sum, accessTokenLabel, body) || body[0] != tokenVersion || (body[1] != TokenForAPIKey && body[1] != TokenForUser) {
		return 0, uuid.Nil, time.Time{}, stamp, ErrAccessToken
	}
	expires = time.Unix(int64(binary.BigEndian.Uint64(body[18:26])), 0)
	if !now.Before(expires) {
		return 0, uuid.Nil, time.Time{}, stamp, ErrAccessToken
	}
	copy(id[:], body[2:18])
	copy(stamp[:], body[26:])
	return body[1], id, expires, stamp, nil
}
