package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Run:ai's access keys are a person's own keys (docs/api.md "Service accounts and access
// keys"): the signed-in person makes, lists, reads, deletes their keys and regenerates their
// secrets at /api/v1/access-keys; admins list and delete anyone's at
// /api/v1/administration/access-keys. A key has no role of its own: it acts with its
// person's access rules as they are at each use, never more, and goes when the person does.
// Only a person signed in with their own credential (a session, a token from their password,
// an OIDC token) manages keys: a key cannot make, regenerate or delete keys.

func (h *access) accessKeyRoutes(r router) {
	r.api.GET("/access-keys", h.listAccessKeys)
	r.api.POST("/access-keys", h.postAccessKey)
	r.api.GET("/access-keys/:accessKeyId", h.getAccessKey)
	r.api.DELETE("/access-keys/:accessKeyId", h.deleteAccessKey)
	r.api.POST("/access-keys/:accessKeyId/secret", h.regenerateAccessKeySecret)
	r.api.GET("/administration/access-keys", h.listEveryonesAccessKeys)
	r.api.DELETE("/administration/access-keys/:accessKeyId", h.deleteAnyonesAccessKey)
}

// runAIAccessKey is Run:ai's AccessKey1 (and, with createdBy, AccessKeyAdministration), with
// Arbiter's expiry beside.
type runAIAccessKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ClientID  string     `json:"clientId"`
	CreatedBy string     `json:"createdBy,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	LastLogin *time.Time `json:"lastLogin"`
	ExpiresAt time.Time  `json:"expiresAt"`
}

func accessKeyView(k store.APIKey) runAIAccessKey {
	return runAIAccessKey{ID: k.ID.String(), Name: k.Name, ClientID: k.ID.String(), CreatedAt: k.CreatedAt.UTC(),
		LastLogin: k.LastUsedAt, ExpiresAt: k.ExpiresAt.UTC()}
}

func administeredAccessKeyView(k store.APIKey) runAIAccessKey {
	v := accessKeyView(k)
	v.CreatedBy = k.CreatedBy
	return v
}

// keyHolder returns the caller's users row id: access keys are a person's, and only a person
// signed in with their own credential may change them (manage), not one of their keys.
func keyHolder(c echo.Context, manage bool) (uuid.UUID, error) {
	id := identity(c)
	owner, err := uuid.Parse(id.UserID)
	if !id.Authenticated() || err != nil {
		return uuid.Nil, forbidden("access keys are a person's own: sign in as a person (a session, or a token from your password) to manage yours; a service account has none")
	}
	if manage && id.AccessKeyID != "" {
		return uuid.Nil, forbidden("an access key cannot make, regenerate or delete access keys: sign in with your password (or your identity provider) to manage your keys")
	}
	return owner, nil
}

func (h *access) listAccessKeys(c echo.Context) error {
	owner, err := keyHolder(c, false)
	if err != nil {
		return err
	}
	keys, err := h.users.AccessKeys(c.Request().Context(), store.AccessKeyFilter{OwnerUserID: &owner})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"accessKeys": mapSlice(keys, accessKeyView)})
}

// accessKeyRequest is Run:ai's AccessKeyCreationRequest1, with Arbiter's optional expiry.
type accessKeyRequest struct {
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// decodeAccessKey reads Run:ai's AccessKeyCreationRequest1 with Arbiter's optional expiry
// (90 days when absent, at most two years; a past one the store refuses).
func decodeAccessKey(c echo.Context) (name string, expires time.Time, err error) {
	var req accessKeyRequest
	if err := decodeJSON(c, &req, "name", "expiresAt"); err != nil {
		return "", time.Time{}, err
	}
	if err := checkLength("name", req.Name, maxAPIKeyName); err != nil {
		return "", time.Time{}, err
	}
	if strings.TrimSpace(req.Name) == "" {
		return "", time.Time{}, badField("name", "name is missing; name the key after where it is used, such as laptop or ci")
	}
	expires = time.Now().Add(90 * 24 * time.Hour)
	if req.ExpiresAt != nil {
		expires = *req.ExpiresAt
	}
	if time.Until(expires) > maxKeyLifetime {
		return "", time.Time{}, badField("expiresAt", "expiresAt is more than two years away; keys must expire within two years")
	}
	return req.Name, expires, nil
}

func (h *access) postAccessKey(c echo.Context) error {
	target(c, "create", "access-key", "")
	owner, err := keyHolder(c, true)
	if err != nil {
		return err
	}
	name, expires, err := decodeAccessKey(c)
	if err != nil {
		return err
	}
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	k, err := h.users.CreateAccessKey(c.Request().Context(), store.NewAccessKey{ID: id, OwnerUserID: owner, Name: name,
		ExpiresAt: expires, SecretHash: hash}, actor(c))
	if err != nil {
		return err
	}
	_, secret, _ := auth.ParseAPIKey(token)
	c.Response().Header().Set("Cache-Control", "no-store") // the answer carries the secret
	return c.JSON(http.StatusCreated, map[string]any{"id": k.ID.String(), "name": k.Name, "clientId": k.ID.String(),
		"clientSecret": secret, "createdAt": k.CreatedAt.UTC(), "expiresAt": k.ExpiresAt.UTC()})
}

// ownAccessKey is the path's access key id and the caller, who must hold their own keys
// (keyHolder; manage: to change them).
func ownAccessKey(c echo.Context, manage bool) (id, owner uuid.UUID, err error) {
	if id, err = pathID(c, "accessKeyId"); err != nil {
		return id, owner, err
	}
	owner, err = keyHolder(c, manage)
	return id, owner, err
}

func (h *access) getAccessKey(c echo.Context) error {
	id, owner, err := ownAccessKey(c, false)
	if err != nil {
		return err
	}
	k, err := h.users.AccessKey(c.Request().Context(), owner, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, accessKeyView(k))
}

func (h *access) deleteAccessKey(c echo.Context) error {
	target(c, "delete", "access-key", c.Param("accessKeyId"))
	id, owner, err := ownAccessKey(c, true)
	if err != nil {
		return err
	}
	if err := h.users.DeleteAccessKey(c.Request().Context(), id, &owner, actor(c)); err != nil {
		return err
	}
	h.keys.forget(id)
	return c.NoContent(http.StatusNoContent)
}

func (h *access) regenerateAccessKeySecret(c echo.Context) error {
	target(c, "regenerate-secret", "access-key", c.Param("accessKeyId"))
	id, owner, err := ownAccessKey(c, true)
	if err != nil {
		return err
	}
	return h.regenerateSecret(c, id, &owner)
}

// accessKeyFilterOf reads the administration list's clientId and createdBy.
func accessKeyFilterOf(q url.Values) (store.AccessKeyFilter, error) {
	f := store.AccessKeyFilter{CreatedBy: q.Get("createdBy")}
	if raw := q.Get("clientId"); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil || len(raw) != 36 {
			return f, badField("clientId", "clientId %q is not an access key's client id (a UUID such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c)", raw)
		}
		f.ClientID = &id
	}
	if err := checkLength("createdBy", f.CreatedBy, maxRuleSubject); err != nil {
		return f, err
	}
	if !utf8.ValidString(f.CreatedBy) || strings.ContainsRune(f.CreatedBy, 0) {
		return f, badField("createdBy", "createdBy must be UTF-8 text without NUL characters: the user name or email of the key's maker")
	}
	return f, nil
}

func (h *access) listEveryonesAccessKeys(c echo.Context) error {
	if err := requireAdmin(c, "list everyone's access keys"); err != nil {
		return err
	}
	f, err := accessKeyFilterOf(c.QueryParams())
	if err != nil {
		return err
	}
	keys, err := h.users.AccessKeys(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"accessKeys": mapSlice(keys, administeredAccessKeyView)})
}

func (h *access) deleteAnyonesAccessKey(c echo.Context) error {
	target(c, "delete", "access-key", c.Param("accessKeyId"))
	id, err := pathID(c, "accessKeyId")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "delete other people's access keys"); err != nil {
		return err
	}
	if err := h.users.DeleteAccessKey(c.Request().Context(), id, nil, actor(c)); err != nil {
		return err
	}
	h.keys.forget(id)
	return c.NoContent(http.StatusNoContent)
}
