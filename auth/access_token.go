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
// token stands for, its id, the expiry in Unix seconds, when it was issued in Unix
// nanoseconds (a sign-out ends the tokens issued before it) and a stamp (a random nonce, or for
// a key's token a fingerprint of the key's secret, so a new secret ends them), then the
// HMAC-SHA256 of all of it under the server's key, base64url without padding. Version 1 had
// no issue time; its tokens, an hour long at most, are refused like any other invalid one.
const (
	tokenVersion  = 2
	tokenNonceLen = 8
	tokenBodyLen  = 1 + 1 + 16 + 8 + 8 + tokenNonceLen
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

// Issue returns a token for (kind, id), issued now and valid until expires.
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
	binary.BigEndian.PutUint64(body[26:34], uint64(time.Now().UnixNano()))
	copy(body[34:], stamp[:])
	return AccessTokenPrefix + base64.RawURLEncoding.EncodeToString(append(body, a.signer.Sum(accessTokenLabel, body)...))
}

// IsAccessToken says whether token is shaped like an access token (it may still be invalid).
func IsAccessToken(token string) bool { return strings.HasPrefix(token, AccessTokenPrefix) }

// AccessToken is what a valid token stands for.
type AccessToken struct {
	Kind    byte // TokenForAPIKey or TokenForUser
	ID      uuid.UUID
	Issued  time.Time
	Expires time.Time
	Stamp   [tokenNonceLen]byte // IssueStamped's stamp; random for Issue
}

// Check returns what a token this server issued stands for, if it has not expired at now.
func (a AccessTokens) Check(token string, now time.Time) (kind byte, id uuid.UUID, expires time.Time, err error) {
	t, err := a.Verify(token, now)
	return t.Kind, t.ID, t.Expires, err
}

// CheckStamped is Check that also returns the token's stamp (IssueStamped; random for Issue).
func (a AccessTokens) CheckStamped(token string, now time.Time) (kind byte, id uuid.UUID, expires time.Time, stamp [tokenNonceLen]byte, err error) {
	t, err := a.Verify(token, now)
	return t.Kind, t.ID, t.Expires, t.Stamp, err
}

// Verify returns what a token this server issued stands for, when it was issued and its
// stamp, if it has not expired at now.
func (a AccessTokens) Verify(token string, now time.Time) (AccessToken, error) {
	rest, ok := strings.CutPrefix(token, AccessTokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBodyLen+sha256.Size) {
		return AccessToken{}, ErrAccessToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest) // strict: one spelling per token
	if err != nil || len(b) != tokenBodyLen+sha256.Size {
		return AccessToken{}, ErrAccessToken
	}
	body, sum := b[:tokenBodyLen], b[tokenBodyLen:]
	if !a.signer.Verify(sum, accessTokenLabel, body) || body[0] != tokenVersion || (body[1] != TokenForAPIKey && body[1] != TokenForUser) {
		return AccessToken{}, ErrAccessToken
	}
	t := AccessToken{Kind: body[1],
		Expires: time.Unix(int64(binary.BigEndian.Uint64(body[18:26])), 0),
		Issued:  time.Unix(0, int64(binary.BigEndian.Uint64(body[26:34])))}
	if !now.Before(t.Expires) {
		return AccessToken{}, ErrAccessToken
	}
	copy(t.ID[:], body[2:18])
	copy(t.Stamp[:], body[34:])
	return t, nil
}
