package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Refresh tokens (Run:ai's refresh_token grant): /api/v1/token answers one beside each access
// token it grants, which the command line keeps instead of the secret or password and trades
// for a new access token (grantType refresh_token, refreshToken) until it expires or is revoked
// at /api/v1/token/revoke (`arbiter logout`). A refresh token is stored (its secret's hash), so
// that it can be revoked; access tokens stay signed and unstored.

// RefreshTokenStore is what the refresh_token grant needs of the store.
type RefreshTokenStore interface {
	CreateRefreshToken(ctx context.Context, t store.RefreshToken) (store.RefreshToken, error)
	CheckRefreshToken(ctx context.Context, id uuid.UUID, secretHash []byte) (store.RefreshToken, error)
	RevokeRefreshToken(ctx context.Context, id uuid.UUID, secretHash []byte) error
}

// checkRefresh refuses a refresh_token grant without a token shaped as this server's.
func (r tokenRequest) checkRefresh() error {
	n := r.names
	if r.refreshToken == "" {
		return tokenRefusal(http.StatusBadRequest, "invalid_request", "the %s grant needs %s: the refresh token an earlier token request answered", grantRefreshToken, n.refreshToken)
	}
	if _, _, ok := auth.ParseRefreshToken(r.refreshToken); !ok {
		return tokenRefusal(http.StatusBadRequest, "invalid_grant", "%s is not a refresh token of this server (they start with %q); sign in again", n.refreshToken, auth.RefreshTokenPrefix)
	}
	if r.clientSecret != "" || r.username != "" || r.password != "" {
		return tokenRefusal(http.StatusBadRequest, "invalid_request", "the %s grant takes no %s, %s or %s; send only %s (and, as Run:ai's clients do, %s)",
			grantRefreshToken, n.clientSecret, n.username, n.password, n.refreshToken, n.clientID)
	}
	return nil
}

// refreshTokens is the store's refresh tokens, or nil when the credential store has none.
func (h *signIn) refreshTokens() RefreshTokenStore {
	rs, _ := h.users.(RefreshTokenStore)
	return rs
}

// refreshTokenFor is the refresh token answered beside t: the one a refresh_token grant
// presented, else a new one for whom t stands.
func (h *signIn) refreshTokenFor(c echo.Context, t issuedToken) (string, error) {
	if t.refreshText != "" {
		return t.refreshText, nil
	}
	rs := h.refreshTokens()
	if rs == nil {
		return "", tokenRefusal(http.StatusServiceUnavailable, "temporarily_unavailable", "this server keeps no refresh tokens")
	}
	id := uuid.New()
	text, hash := auth.NewRefreshToken(id)
	row := t.refresh
	row.ID, row.SecretHash, row.ExpiresAt = id, hash, time.Now().Add(auth.RefreshTokenLifetime)
	if _, err := rs.CreateRefreshToken(c.Request().Context(), row); err != nil {
		return "", err
	}
	return text, nil
}

// grantRefresh trades a refresh token for an access token for whom it stands, if that key or
// account may still have one.
func (h *signIn) grantRefresh(c echo.Context, r tokenRequest) (issuedToken, error) {
	ctx := c.Request().Context()
	rs := h.refreshTokens()
	if rs == nil {
		return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_grant", "this server keeps no refresh tokens")
	}
	id, secret, _ := auth.ParseRefreshToken(r.refreshToken) // checkRefresh parsed it
	t, err := rs.CheckRefreshToken(ctx, id, auth.HashAPIKeySecret(secret))
	if errors.Is(err, store.ErrBadRefreshToken) { // any caller can make these up: counted, sampled
		h.refusals.refused(c, refusedUnknownRefresh, "", h.tokenEntry(c, "anonymous", "user", id.String(), "denied", http.StatusUnauthorized, "unknown, expired or revoked refresh token"))
		return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_grant",
			"the refresh token is not valid: it is unknown, has expired (they last %v) or was revoked by a logout; sign in again", auth.RefreshTokenLifetime)
	}
	if err != nil {
		return issuedToken{}, err
	}
	refused := func(subject, subjectType, why string) (issuedToken, error) {
		h.auditToken(c, subject, subjectType, t.SubjectID.String(), "denied", http.StatusUnauthorized, why)
		return issuedToken{}, tokenRefusal(http.StatusUnauthorized, "invalid_grant", "%s; sign in again", why)
	}
	expires := time.Now().Add(auth.AccessTokenLifetime)
	if t.SubjectKind == store.RefreshForAPIKey {
		k, err := h.users.ActiveAPIKey(ctx, t.SubjectID)
		if errors.Is(err, store.ErrBadKey) {
			return refused(t.SubjectID.String(), "api-key", "the API key this refresh token was issued for has been revoked, disabled or has expired")
		}
		if err != nil {
			return issuedToken{}, err
		}
		stamp := secretStamp(k.SecretHash)
		if string(stamp[:]) != string(t.KeyStamp) {
			return refused(k.ID.String(), keySubjectType(k), "the secret this refresh token was issued for has been regenerated")
		}
		if k.OwnerUserID != nil {
			if _, uerr := h.users.User(ctx, *k.OwnerUserID); errors.Is(uerr, store.ErrNotFound) {
				return refused(k.ID.String(), keySubjectType(k), "the person whose access key this refresh token was issued for no longer exists")
			} else if uerr != nil {
				return issuedToken{}, uerr
			}
		}
		if k.ExpiresAt.Before(expires) {
			expires = k.ExpiresAt
		}
		return h.issueAudited(c, k.ID.String(), keySubjectType(k), k.ID.String(), func() issuedToken {
			return issuedToken{token: h.tokens.IssueStamped(auth.TokenForAPIKey, k.ID, expires, stamp), expires: expires, refreshText: r.refreshToken}
		})
	}
	u, err := h.users.User(ctx, t.SubjectID)
	if errors.Is(err, store.ErrNotFound) {
		return refused(t.SubjectID.String(), "user", "the account this refresh token was issued for no longer exists")
	}
	if err != nil {
		return issuedToken{}, err
	}
	if u.SignedInBefore(t.CreatedAt) {
		return refused(u.ID.String(), "user", "this refresh token was issued before an admin signed its account out or reset its password")
	}
	return h.issueAudited(c, u.ID.String(), "user", u.ID.String(), func() issuedToken {
		return issuedToken{token: h.tokens.Issue(auth.TokenForUser, u.ID, expires), expires: expires, refreshText: r.refreshToken}
	})
}

type revokeRequest struct {
	RefreshToken string `json:"refreshToken"`
}

// revokeRefreshToken answers POST /api/v1/token/revoke {refreshToken}: the token is deleted
// and can no longer be traded. As RFC 7009 section 2.2 asks, revoking one that is unknown or
// already revoked answers 200 too, so a logout can be repeated and reveals nothing.
func (h *signIn) revokeRefreshToken(c echo.Context) error {
	markAudited(c)
	var b revokeRequest
	if err := decodeJSON(c, &b, "refreshToken"); err != nil {
		return err
	}
	id, secret, ok := auth.ParseRefreshToken(b.RefreshToken)
	if !ok || len(b.RefreshToken) > maxClientField {
		return &httpError{status: http.StatusBadRequest, field: "refreshToken",
			message: "refreshToken must be a refresh token of this server, as /api/v1/token answered it (they start with " + auth.RefreshTokenPrefix + ")"}
	}
	rs := h.refreshTokens()
	if rs == nil {
		return &httpError{status: http.StatusServiceUnavailable, message: "this server keeps no refresh tokens"}
	}
	if err := rs.RevokeRefreshToken(c.Request().Context(), id, auth.HashAPIKeySecret(secret)); err != nil {
		return err
	}
	h.auditRevoke(c, id.String())
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{})
}

// auditRevoke writes the audit row of a revocation.
func (h *signIn) auditRevoke(c echo.Context, id string) {
	if h.audit == nil {
		return
	}
	e := store.AuditEntry{Subject: "anonymous", SubjectType: "user", SourceIP: c.RealIP(), RequestID: requestID(c),
		HTTPMethod: c.Request().Method, Action: "revoke", EntityType: "refresh-token", EntityID: id, EntityName: id,
		Result: "success", HTTPStatus: http.StatusOK}
	if err := h.audit.RecordAudit(context.WithoutCancel(c.Request().Context()), e); err != nil {
		h.log.Warn("audit row not written", "request_id", e.RequestID, "err", err)
	}
}
