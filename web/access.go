package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// access is the access feature: who may do what (access rules), the API keys services sign
// in with, and the caller's own identity (/api/v1/me); the Access page shows the first two to
// admins.
type access struct {
	users AuthStore
	keys  *keyCache         // forgets a revoked key at once
	org   OrganizationStore // the Scope picker's departments and projects; nil: none offered
	layout
}

func (h *access) routes(r router) {
	r.api.GET("/me", h.me)
	r.api.GET("/access-rules", h.listAccessRules)
	r.api.POST("/access-rules", h.postAccessRule)
	r.api.DELETE("/access-rules/:id", h.deleteAccessRule)
	r.api.GET("/api-keys", h.listAPIKeys)
	r.api.POST("/api-keys", h.postAPIKey)
	r.api.DELETE("/api-keys/:id", h.revokeAPIKey)
	r.page(http.MethodGet, "/access", routenames.Access, h.accessPage)
	r.page(http.MethodPost, "/access/rules", routenames.AccessRuleCreate, h.accessRuleForm)
	r.page(http.MethodPost, "/access/rules/:id/delete", routenames.AccessRuleDelete, h.accessRuleDeleteForm)
	r.page(http.MethodPost, "/access/keys", routenames.APIKeyCreate, h.apiKeyForm)
	r.page(http.MethodPost, "/access/keys/:id/revoke", routenames.APIKeyRevoke, h.apiKeyRevokeForm)
	h.serviceAccountRoutes(r)
	h.accessKeyRoutes(r)
}

type grantView struct {
	Role      string `json:"role"`
	ScopeType string `json:"scopeType"`
	ScopeID   string `json:"scopeId,omitempty"`
}

// me says who the caller is and what they hold.
func (h *access) me(c echo.Context) error {
	id := identity(c)
	grants := make([]grantView, len(id.Grants))
	for i, g := range id.Grants {
		grants[i] = grantView{Role: string(g.Role), ScopeType: string(g.Scope.Type), ScopeID: g.Scope.ID}
	}
	return c.JSON(http.StatusOK, map[string]any{"subject": id.Subject, "subjectType": id.SubjectType,
		"displayName": id.DisplayName, "role": id.Role, "email": id.Email, "groups": id.Groups, "grants": grants})
}

func accessRuleView(r store.AccessRule) views.AccessRule {
	return views.AccessRule{ID: r.ID.String(), SubjectType: r.SubjectType, Subject: r.Subject, Role: r.Role,
		ScopeType: r.ScopeType, ScopeID: uuidString(r.ScopeID), CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy}
}

func apiKeyView(k store.APIKey) views.APIKey {
	v := views.APIKey{ID: k.ID.String(), Name: k.Name, Role: k.Role, ScopeType: k.ScopeType, ScopeID: uuidString(k.ScopeID),
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt, CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy, Status: "active"}
	switch {
	case k.RevokedAt != nil:
		v.Status = "revoked"
	case k.DisabledAt != nil:
		v.Status = "disabled"
	case !time.Now().Before(k.ExpiresAt):
		v.Status = "expired"
	}
	return v
}

func uuidString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// grantRequest is the role binding of an access rule or an API key.
type grantRequest struct {
	Role      string  `json:"role"`
	ScopeType string  `json:"scopeType"`
	ScopeID   *string `json:"scopeId"`
}

// check validates a role binding: a known role, at a scope it may be bound at.
func (g grantRequest) check() (auth.Role, auth.Scope, *uuid.UUID, error) {
	role, err := auth.ParseRole(g.Role)
	if err != nil {
		return "", auth.Scope{}, nil, badRequest("%s", err.Error())
	}
	if g.ScopeType == "" {
		g.ScopeType = string(auth.ScopeSystem)
	}
	scope := auth.Scope{Type: auth.ScopeType(g.ScopeType)}
	var scopeID *uuid.UUID
	if g.ScopeID != nil && strings.TrimSpace(*g.ScopeID) != "" {
		id, err := uuid.Parse(strings.TrimSpace(*g.ScopeID))
		if err != nil {
			return "", auth.Scope{}, nil, badRequest("scopeId %q is not a valid id; use the department's or project's UUID", *g.ScopeID)
		}
		scope.ID, scopeID = id.String(), &id
	}
	if err := auth.ValidateGrant(role, scope); err != nil {
		return "", auth.Scope{}, nil, badRequest("%s", err.Error())
	}
	return role, scope, scopeID, nil
}

func (h *access) listAccessRules(c echo.Context) error {
	if err := requireAdmin(c, "list access rules"); err != nil {
		return err
	}
	return listAll(c, store.AccessRuleSpec, "rules", h.users.AccessRules, accessRuleView)
}

type accessRuleRequest struct {
	SubjectType string `json:"subjectType"`
	Subject     string `json:"subject"`
	grantRequest
}

func (h *access) createAccessRule(c echo.Context, req accessRuleRequest) (store.AccessRule, error) {
	target(c, "create", "access-rule", "")
	if err := requireAdmin(c, "manage access rules"); err != nil {
		return store.AccessRule{}, err
	}
	if err := checkLength("subject", req.Subject, maxRuleSubject); err != nil {
		return store.AccessRule{}, err
	}
	if req.SubjectType != "user" && req.SubjectType != "group" {
		return store.AccessRule{}, badField("subjectType", "subjectType %q is not known; use user or group", req.SubjectType)
	}
	role, scope, scopeID, err := req.check()
	if err != nil {
		return store.AccessRule{}, err
	}
	return h.users.CreateAccessRule(c.Request().Context(), store.NewAccessRule{SubjectType: req.SubjectType, Subject: req.Subject,
		Role: string(role), ScopeType: string(scope.Type), ScopeID: scopeID}, actor(c))
}

func (h *access) postAccessRule(c echo.Context) error {
	target(c, "create", "access-rule", "")
	if err := requireAdmin(c, "manage access rules"); err != nil {
		return err
	}
	var req accessRuleRequest
	if err := decodeJSON(c, &req, "subjectType", "subject", "role", "scopeType", "scopeId"); err != nil {
		return err
	}
	r, err := h.createAccessRule(c, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, accessRuleView(r))
}

func (h *access) deleteAccessRule(c echo.Context) error {
	target(c, "delete", "access-rule", c.Param("id"))
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "manage access rules"); err != nil {
		return err
	}
	if err := h.users.DeleteAccessRule(c.Request().Context(), id, actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *access) listAPIKeys(c echo.Context) error {
	if err := requireAdmin(c, "list API keys"); err != nil {
		return err
	}
	keys, err := h.users.APIKeys(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": mapSlice(keys, apiKeyView)})
}

type apiKeyRequest struct {
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
	grantRequest
}

// maxKeyLifetime bounds an API key's validity; keys always expire. The form asks for days,
// 1 to maxKeyDays.
const (
	maxKeyLifetime = maxKeyDays * 24 * time.Hour
	maxKeyDays     = 730
)

func (h *access) createAPIKey(c echo.Context, req apiKeyRequest) (views.APIKey, error) {
	target(c, "create", "api-key", "")
	if err := requireAdmin(c, "create API keys"); err != nil {
		return views.APIKey{}, err
	}
	if err := checkLength("name", req.Name, maxAPIKeyName); err != nil {
		return views.APIKey{}, err
	}
	role, scope, scopeID, err := req.check()
	if err != nil {
		return views.APIKey{}, err
	}
	expires := time.Now().Add(90 * 24 * time.Hour)
	if req.ExpiresAt != nil {
		expires = *req.ExpiresAt
	}
	if time.Until(expires) > maxKeyLifetime {
		return views.APIKey{}, badField("expiresAt", "expiresAt is more than two years away; keys must expire within two years")
	}
	id := uuid.New()
	token, hash := auth.NewAPIKey(id)
	k, err := h.users.CreateAPIKey(c.Request().Context(), store.NewAPIKey{ID: id, Name: req.Name, Role: string(role),
		ScopeType: string(scope.Type), ScopeID: scopeID, ExpiresAt: expires, SecretHash: hash}, actor(c))
	if err != nil {
		return views.APIKey{}, err
	}
	v := apiKeyView(k)
	v.Token = token
	_, v.ClientSecret, _ = auth.ParseAPIKey(token)
	v.ClientID = k.ID.String()
	return v, nil
}

func (h *access) postAPIKey(c echo.Context) error {
	target(c, "create", "api-key", "")
	if err := requireAdmin(c, "create API keys"); err != nil {
		return err
	}
	var req apiKeyRequest
	if err := decodeJSON(c, &req, "name", "role", "scopeType", "scopeId", "expiresAt"); err != nil {
		return err
	}
	v, err := h.createAPIKey(c, req)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store") // the answer carries the secret
	return c.JSON(http.StatusCreated, v)
}

func (h *access) revokeAPIKey(c echo.Context) error {
	target(c, "revoke", "api-key", c.Param("id"))
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := requireAdmin(c, "revoke API keys"); err != nil {
		return err
	}
	if err := h.users.RevokeAPIKey(c.Request().Context(), id, actor(c)); err != nil {
		return err
	}
	h.keys.forget(id)
	return c.NoContent(http.StatusNoContent)
}

// accessPage shows access rules and API keys to admins.
func (h *access) accessPage(c echo.Context) error {
	return h.renderAccess(c, http.StatusOK, nil, "")
}

func (h *access) renderAccess(c echo.Context, status int, newKey *views.APIKey, message string) error {
	if err := requireAdmin(c, "manage access"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	rules, err := h.users.AccessRules(ctx, listquery.Query{SortBy: "subject"})
	if err != nil {
		return err
	}
	keys, err := h.users.APIKeys(ctx)
	if err != nil {
		return err
	}
	m := views.AccessPage{Page: h.page(c, "Access", "access"), Rules: mapSlice(rules, accessRuleView),
		Keys: mapSlice(keys, apiKeyView), NewToken: newKey, Error: message}
	for _, r := range auth.Roles {
		m.Roles = append(m.Roles, string(r))
	}
	if err := h.pickers(ctx, &m); err != nil {
		return err
	}
	return render(c, status, views.AccessView(m))
}

// ruleSubjectChooser lists the users and groups an access rule may name; *store.Store is one.
type ruleSubjectChooser interface {
	RuleSubjectChoices(ctx context.Context) (users, groups []store.SubjectChoice, err error)
}

// pickers fills the Access page's choices: departments and projects by name for the Scope
// picker (and the tables' scopes), and the users and groups the rule form suggests.
func (h *access) pickers(ctx context.Context, m *views.AccessPage) error {
	m.ScopeNames = map[string]string{}
	if h.org != nil {
		deps, err := h.org.Departments(ctx, listquery.Query{SortBy: "name", Limit: listquery.MaxLimit})
		if err != nil {
			return err
		}
		depName := map[uuid.UUID]string{}
		for _, d := range deps {
			depName[d.ID] = d.Name
			m.ScopeNames[d.ID.String()] = d.Name
			m.Scopes = append(m.Scopes, views.Choice{Value: "department:" + d.ID.String(), Label: d.Name, Group: "Departments"})
		}
		projects, err := h.org.ProjectRefs(ctx)
		if err != nil {
			return err
		}
		slices.SortFunc(projects, func(a, b store.ProjectRef) int { return strings.Compare(a.Name, b.Name) })
		for _, p := range projects {
			m.ScopeNames[p.ID.String()] = p.Name
			label := p.Name
			if d := depName[p.DepartmentID]; d != "" {
				label += " (department " + d + ")"
			}
			m.Scopes = append(m.Scopes, views.Choice{Value: "project:" + p.ID.String(), Label: label, Group: "Projects"})
		}
	}
	if sc, ok := h.users.(ruleSubjectChooser); ok {
		users, groups, err := sc.RuleSubjectChoices(ctx)
		if err != nil {
			return err
		}
		for _, u := range users {
			m.Subjects = append(m.Subjects, views.Choice{Value: u.Subject, Label: cmpOr(u.Label, "user")})
		}
		for _, g := range groups {
			m.Subjects = append(m.Subjects, views.Choice{Value: g.Subject, Label: "group"})
		}
	}
	return nil
}

// formScope reads a form's scope: the Scope picker's "system", "department:<id>" or
// "project:<id>", else the scopeType and scopeId fields as the API names them.
func formScope(c echo.Context) (scopeType string, scopeID *string) {
	if v := c.FormValue("scope"); v != "" {
		t, id, _ := strings.Cut(v, ":")
		return t, &id
	}
	id := c.FormValue("scopeId")
	return c.FormValue("scopeType"), &id
}

// formResult answers a form on the Access page: the page again with the reason when refused.
func (h *access) formResult(c echo.Context, err error) error {
	if err == nil {
		return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Access))
	}
	status, message := statusOf(err)
	if status == http.StatusUnauthorized || status == http.StatusForbidden || status >= 500 {
		return err
	}
	return h.renderAccess(c, status, nil, message)
}

func (h *access) accessRuleForm(c echo.Context) error {
	scopeType, scopeID := formScope(c)
	_, err := h.createAccessRule(c, accessRuleRequest{SubjectType: c.FormValue("subjectType"), Subject: c.FormValue("subject"),
		grantRequest: grantRequest{Role: c.FormValue("role"), ScopeType: scopeType, ScopeID: scopeID}})
	return h.formResult(c, err)
}

func (h *access) accessRuleDeleteForm(c echo.Context) error {
	return h.formResult(c, h.deleteAccessRule(c))
}

func (h *access) apiKeyForm(c echo.Context) error {
	scopeType, scopeID := formScope(c)
	req := apiKeyRequest{Name: c.FormValue("name"),
		grantRequest: grantRequest{Role: c.FormValue("role"), ScopeType: scopeType, ScopeID: scopeID}}
	if d := strings.TrimSpace(c.FormValue("days")); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > maxKeyDays {
			return h.formResult(c, badField("days", "valid for days must be a whole number from 1 to %d (two years); %q is not", maxKeyDays, d))
		}
		t := time.Now().UTC().AddDate(0, 0, n) // UTC: no daylight-saving hour to push day 730 past the limit
		req.ExpiresAt = &t
	}
	v, err := h.createAPIKey(c, req)
	if err != nil {
		return h.formResult(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store") // the page shows the secret
	return h.renderAccess(c, http.StatusCreated, &v, "")
}

func (h *access) apiKeyRevokeForm(c echo.Context) error {
	return h.formResult(c, h.revokeAPIKey(c))
}
