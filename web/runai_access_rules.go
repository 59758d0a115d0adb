package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/labstack/echo/v4"
)

// runAIAuthorization is Run:ai's authorization API (/api/v1/authorization/...) over Arbiter's
// own access rules and roles: the rules Arbiter's /api/v1/access-rules lists, named by their
// number, with Run:ai's role ids and names (auth.Role's ID and Title), and the roles with the
// permissions Arbiter's one authorization table gives them (runai_roles.go). Reading and
// changing rules is for admins, as on /api/v1/access-rules; the roles, and the caller's own
// permissions and rules, are for every signed-in caller.
type runAIAuthorization struct {
	users AuthStore
	org   OrganizationStore // the department or project a new rule's scope names
}

func (h *runAIAuthorization) routes(r router) {
	r.api.GET("/authorization/access-rules", h.listRules)
	r.api.POST("/authorization/access-rules", h.createRule)
	r.api.GET("/authorization/access-rules/count", h.countRules)
	r.api.GET("/authorization/access-rules/:accessRuleId", h.getRule)
	r.api.DELETE("/authorization/access-rules/:accessRuleId", h.deleteRule)
	r.api.GET("/authorization/roles", h.listRoles)
	r.api.GET("/authorization/roles/:roleIdPath", h.getRole)
	r.api.GET("/authorization/permissions", h.permissions)
	r.api.GET("/authorization/me/access-rules", h.myRules)
	r.api.GET("/authorization/me/access-rules/count", h.countMyRules)
}

// runAISystemScope names the system scope, which has no row of its own, in Run:ai's terms:
// the installation is its one tenant (and its one cluster), so a system rule's scopeId is the
// tenant's id.
var runAISystemScope = store.RuleSelection{SystemScopeID: strconv.Itoa(runAITenantID), SystemScopeName: "system"}

// runAIGrant is a role at a scope held by a subject, in Run:ai's names.
func runAIGrant(subjectType, subject string, role auth.Role, scopeType, scopeID, scopeName, cluster string) views.RunAIGrant {
	return views.RunAIGrant{SubjectID: subject, SubjectType: subjectType, RoleID: role.ID(), RoleName: role.Title(),
		ScopeID: scopeID, ScopeType: scopeType, ScopeName: scopeName, ClusterID: cluster, TenantID: runAITenantID}
}

// runAIAccessRuleView is r in Run:ai's AccessRule shape. A rule is never changed once made,
// so it was last updated when it was made.
func runAIAccessRuleView(r store.NamedAccessRule, cluster string) views.RunAIAccessRule {
	return views.RunAIAccessRule{ID: r.Number, RunAIGrant: runAIGrant(r.SubjectType, r.Subject, auth.Role(r.Role), r.ScopeType, r.ScopeKey, r.ScopeName, cluster),
		RuleUUID: r.ID.String(), CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
		Status: views.RunAIAccessRuleStatus{Phase: "Ready"}}
}

// runAIRuleList is Run:ai's answer to a list of access rules.
type runAIRuleList struct {
	TotalRecords   int                     `json:"totalRecords"`
	DisplayRecords int                     `json:"displayRecords"`
	AccessRules    []views.RunAIAccessRule `json:"accessRules"`
}

// runAIRuleQuery reads a list of access rules' parameters: listquery's (filterBy, sortBy,
// sortOrder, search, offset, limit, by Run:ai's field names) and Run:ai's own query parameters,
// each a filter: subjectType, subjectIdFilter (part of the subject), subjectIds, scopeType,
// scopeId, roleId, and lastUpdated (rules changed since then: a rule changes only when made).
// includeDeleted adds nothing (a removed rule is gone) and clusterId must be the one cluster.
func runAIRuleQuery(v url.Values, cluster string) (listquery.Query, store.RuleSelection, error) {
	sel := runAISystemScope
	q, err := listquery.Parse(v, store.NamedAccessRuleSpec)
	if err != nil {
		return q, sel, err
	}
	if v.Has("clusterId") {
		if err := checkClusterID(optional[string]{Set: true, Value: v.Get("clusterId")}, cluster); err != nil {
			return q, sel, err
		}
	}
	if s := v.Get("includeDeleted"); s != "" {
		if _, err := strconv.ParseBool(s); err != nil {
			return q, sel, badField("includeDeleted", "includeDeleted %q must be true or false", s)
		}
	}
	filter := func(param, field string, op listquery.Op) {
		if s := v.Get(param); s != "" {
			q.Filters = append(q.Filters, listquery.Filter{Field: field, Op: op, Value: s})
		}
	}
	filter("subjectType", "subjectType", listquery.Eq)
	filter("subjectIdFilter", "subjectId", listquery.Contains)
	filter("scopeType", "scopeType", listquery.Eq)
	filter("scopeId", "scopeId", listquery.Eq)
	if s := v.Get("roleId"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 32); err != nil || n < 1 {
			return q, sel, badField("roleId", "roleId %q is not a role id; use one of %s", s, roleChoices())
		}
		filter("roleId", "roleId", listquery.Eq)
	}
	if s := v.Get("lastUpdated"); s != "" {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return q, sel, badField("lastUpdated", "lastUpdated %q must be an RFC 3339 time, such as 2026-01-31T09:00:00Z", s)
		}
		filter("lastUpdated", "createdAt", listquery.GreaterEq)
	}
	if v.Has("subjectIds") {
		sel.Subjects = []string{}
		for s := range strings.SplitSeq(v.Get("subjectIds"), ",") {
			if s = strings.TrimSpace(s); s != "" {
				sel.Subjects = append(sel.Subjects, s)
			}
		}
	}
	return q, sel, nil
}

// listRules is Run:ai's get_access_rules: one page of the rules, and how many there are.
func (h *runAIAuthorization) listRules(c echo.Context) error {
	if err := requireAdmin(c, "list access rules"); err != nil {
		return err
	}
	q, sel, err := runAIRuleQuery(c.QueryParams(), clusterID(c))
	if err != nil {
		return err
	}
	rules, total, err := h.users.NamedAccessRules(c.Request().Context(), q, sel)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, runAIRuleList{TotalRecords: total, DisplayRecords: len(rules), AccessRules: mapSlice(rules, func(r store.NamedAccessRule) views.RunAIAccessRule { return runAIAccessRuleView(r, clusterID(c)) })})
}

// countRules is Run:ai's count_access_rules: how many rules the list selects.
func (h *runAIAuthorization) countRules(c echo.Context) error {
	if err := requireAdmin(c, "count access rules"); err != nil {
		return err
	}
	q, sel, err := runAIRuleQuery(c.QueryParams(), clusterID(c))
	if err != nil {
		return err
	}
	n, err := h.users.CountNamedAccessRules(c.Request().Context(), q, sel)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, countAnswer{Count: n})
}

// ruleNumber parses the path's access rule number (Run:ai's accessRuleId).
func ruleNumber(c echo.Context) (int32, error) {
	raw := c.Param("accessRuleId")
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || n < 0 {
		return 0, badRequest("%q is not an access rule id; access rules are numbered 1, 2, … (the id in the list)", raw)
	}
	return int32(n), nil
}

func (h *runAIAuthorization) getRule(c echo.Context) error {
	if err := requireAdmin(c, "read access rules"); err != nil {
		return err
	}
	n, err := ruleNumber(c)
	if err != nil {
		return err
	}
	r, err := h.users.NamedAccessRule(c.Request().Context(), n, runAISystemScope)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, runAIAccessRuleView(r, clusterID(c)))
}

// deleteRule removes the rule with the path's number, as DELETE /api/v1/access-rules/{id}
// removes it by its uuid (the same audit row).
func (h *runAIAuthorization) deleteRule(c echo.Context) error {
	target(c, "delete", "access-rule", c.Param("accessRuleId"))
	if err := requireAdmin(c, "manage access rules"); err != nil {
		return err
	}
	n, err := ruleNumber(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := h.users.NamedAccessRule(ctx, n, runAISystemScope)
	if err != nil {
		return err
	}
	target(c, "delete", "access-rule", r.ID.String())
	if err := h.users.DeleteAccessRule(ctx, r.ID, actor(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// createRule is Run:ai's create_access_rule: the rule is checked as /api/v1/access-rules
// checks it (an admin makes it; a known role at a scope it may be bound at), its scope must
// exist, and it is made with the same audit row.
func (h *runAIAuthorization) createRule(c echo.Context) error {
	target(c, "create", "access-rule", "")
	if err := requireAdmin(c, "manage access rules"); err != nil {
		return err
	}
	var req runAIAccessRuleRequest
	if err := decodeJSON(c, &req, runAIAccessRuleFields...); err != nil {
		return err
	}
	n, err := req.rule(clusterID(c))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := h.scopeExists(c, n); err != nil {
		return err
	}
	made, err := h.users.CreateAccessRule(ctx, n, actor(c))
	if err != nil {
		return err
	}
	r, err := h.users.NamedAccessRule(ctx, made.Number, runAISystemScope)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, runAIAccessRuleView(r, clusterID(c)))
}

// scopeExists refuses a rule whose department or project is not there.
func (h *runAIAuthorization) scopeExists(c echo.Context, n store.NewAccessRule) error {
	if n.ScopeID == nil {
		return nil
	}
	ctx := c.Request().Context()
	var err error
	switch n.ScopeType {
	case string(auth.ScopeDepartment):
		_, err = h.org.Department(ctx, *n.ScopeID)
	case string(auth.ScopeProject):
		_, err = h.org.Project(ctx, *n.ScopeID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return badField("scopeId", "scopeId %s names no %s of this installation; use the id of one of its %ss", n.ScopeID, n.ScopeType, n.ScopeType)
	}
	return err
}

// roleChoices lists the roles' ids and titles, for refusals.
func roleChoices() string {
	var out []string
	for _, r := range auth.Roles {
		out = append(out, fmt.Sprintf("%d (%s)", r.ID(), r.Title()))
	}
	return strings.Join(out, ", ")
}
