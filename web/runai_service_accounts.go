package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Run:ai's service accounts are Arbiter's API keys (docs/api.md "Service accounts and access
// keys"): /api/v1/service-accounts lists, makes, reads, enables or disables, deletes them and
// regenerates their secret, in Run:ai's shapes; /api/v1/api-keys serves the same keys in
// Arbiter's. Run:ai's service account holds no role (Run:ai grants it access through access
// rules with subjectType app); Arbiter's key carries its own role at its scope, so creating
// one here takes role, scopeType and scopeId beside Run:ai's name, as /api/v1/api-keys does.
// A deleted (revoked) service account is gone from these routes; its row stays for the audit
// log. Admins only.

func (h *access) serviceAccountRoutes(r router) {
	r.api.GET("/service-accounts", h.listServiceAccounts)
	r.api.POST("/service-accounts", h.postServiceAccount)
	r.api.GET("/service-accounts/:serviceAccountId", h.getServiceAccount)
	r.api.PATCH("/service-accounts/:serviceAccountId", h.patchServiceAccount)
	r.api.DELETE("/service-accounts/:serviceAccountId", h.deleteServiceAccount)
	r.api.POST("/service-accounts/:serviceAccountId/secret", h.regenerateServiceAccountSecret)
}

// runAIServiceAccount is Run:ai's ServiceAccount, with Arbiter's role binding and expiry beside.
type runAIServiceAccount struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ClientID  string     `json:"clientId"`
	TenantID  string     `json:"tenantId"`
	Enabled   bool       `json:"enabled"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	LastLogin *time.Time `json:"lastLogin"`
	Role      string     `json:"role"`
	ScopeType string     `json:"scopeType"`
	ScopeID   *string    `json:"scopeId"`
	ExpiresAt time.Time  `json:"expiresAt"`
}

func serviceAccountView(k store.APIKey) runAIServiceAccount {
	return runAIServiceAccount{ID: k.ID.String(), Name: k.Name, ClientID: k.ID.String(), TenantID: strconv.Itoa(runAITenantID),
		Enabled: k.DisabledAt == nil, CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt.UTC(), UpdatedAt: k.UpdatedAt.UTC(),
		LastLogin: k.LastUsedAt, Role: k.Role, ScopeType: k.ScopeType, ScopeID: uuidString(k.ScopeID), ExpiresAt: k.ExpiresAt.UTC()}
}

func (h *access) listServiceAccounts(c echo.Context) error {
	if err := requireAdmin(c, "list service accounts"); err != nil {
		return err
	}
	keys, err := h.users.ServiceAccounts(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapSlice(keys, serviceAccountView))
}

func (h *access) postServiceAccount(c echo.Context) error {
	target(c, "create", "api-key", "")
	if err := requireAdmin(c, "create service accounts"); err != nil {
		return err
	}
	req, err := decodeServiceAccount(c)
	if err != nil {
		return err
	}
	v, err := h.createAPIKey(c, req)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store") // the answer carries the secret
	return c.JSON(http.StatusCreated, map[string]any{"id": v.ID, "name": v.Name, "clientId": v.ClientID, "clientSecret": v.ClientSecret,
		"role": v.Role, "scopeType": v.ScopeType, "scopeId": v.ScopeID, "expiresAt": v.ExpiresAt.UTC()})
}

// decodeServiceAccount reads Run:ai's ServiceAccountCreationRequest with Arbiter's role
// binding and expiry, and checks it as createAPIKey will.
func decodeServiceAccount(c echo.Context) (apiKeyRequest, error) {
	var req apiKeyRequest
	if err := decodeJSON(c, &req, "name", "role", "scopeType", "scopeId", "expiresAt"); err != nil {
		return req, err
	}
	if strings.TrimSpace(req.Name) == "" {
		return req, badField("name", "name is missing; name the service account after the service that uses it, such as nightly-eval")
	}
	if err := checkLength("name", req.Name, maxAPIKeyName); err != nil {
		return req, err
	}
	if req.Role == "" {
		return req, badField("role", "a service account needs a role: Arbiter binds its access to the account itself (Run:ai's access rules of subjectType app are not kept); send role, with scopeType and scopeId unless it holds the role system-wide")
	}
	if _, _, _, err := req.check(); err != nil {
		return req, err
	}
	if req.ExpiresAt != nil && time.Until(*req.ExpiresAt) > maxKeyLifetime {
		return req, badField("expiresAt", "expiresAt is more than two years away; keys must expire within two years")
	}
	return req, nil
}

func (h *access) getServiceAccount(c echo.Context) error {
	id, err := pathID(c, "serviceAccountId")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "read service accounts"); err != nil {
		return err
	}
	k, err := h.users.ServiceAccount(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, serviceAccountView(k))
}

// serviceAccountPatch is Run:ai's ServiceAccountPatchRequest.
type serviceAccountPatch struct {
	Enabled *bool `json:"enabled"`
}

// decodeServiceAccountPatch reads Run:ai's ServiceAccountPatchRequest: enabled, required.
func decodeServiceAccountPatch(c echo.Context) (enabled bool, err error) {
	var req serviceAccountPatch
	if err := decodeJSON(c, &req, "enabled"); err != nil {
		return false, err
	}
	if req.Enabled == nil {
		return false, badField("enabled", "enabled is missing; send true to let the service account sign in or false to refuse it until enabled again")
	}
	return *req.Enabled, nil
}

func (h *access) patchServiceAccount(c echo.Context) error {
	target(c, "update", "api-key", c.Param("serviceAccountId"))
	id, err := pathID(c, "serviceAccountId")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "change service accounts"); err != nil {
		return err
	}
	enabled, err := decodeServiceAccountPatch(c)
	if err != nil {
		return err
	}
	k, err := h.users.SetAPIKeyEnabled(c.Request().Context(), id, enabled, actor(c))
	if err != nil {
		return err
	}
	h.keys.forget(id)
	return c.JSON(http.StatusOK, serviceAccountView(k))
}

func (h *access) deleteServiceAccount(c echo.Context) error {
	target(c, "revoke", "api-key", c.Param("serviceAccountId"))
	id, err := pathID(c, "serviceAccountId")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "delete service accounts"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := h.users.ServiceAccount(ctx, id); err != nil { // deleted before: 404, as Run:ai answers
		return err
	}
	if err := h.users.RevokeAPIKey(ctx, id, actor(c)); err != nil {
		return err
	}
	h.keys.forget(id)
	return c.NoContent(http.StatusNoContent)
}

func (h *access) regenerateServiceAccountSecret(c echo.Context) error {
	target(c, "regenerate-secret", "api-key", c.Param("serviceAccountId"))
	id, err := pathID(c, "serviceAccountId")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "regenerate service accounts' secrets"); err != nil {
		return err
	}
	return h.regenerateSecret(c, id, nil)
}

// regenerateSecret gives key id (owner's access key, or a service account's when owner is
// nil) a new secret and answers it, shown this once; the old one is forgotten at once.
func (h *access) regenerateSecret(c echo.Context, id uuid.UUID, owner *uuid.UUID) error {
	token, hash := auth.NewAPIKey(id)
	if _, err := h.users.RegenerateKeySecret(c.Request().Context(), id, owner, hash, actor(c)); err != nil {
		return err
	}
	h.keys.forget(id)
	_, secret, _ := auth.ParseAPIKey(token)
	c.Response().Header().Set("Cache-Control", "no-store") // the answer carries the secret
	return c.JSON(http.StatusOK, map[string]string{"clientSecret": secret})
}
