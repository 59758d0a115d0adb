package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// myRuleList is Run:ai's MeAccessRulesResponse (the list sits one level down, as there).
type myRuleList struct {
	AccessRules struct {
		TotalRecords   int                       `json:"totalRecords"`
		DisplayRecords int                       `json:"displayRecords"`
		AccessRules    []views.RunAIMyAccessRule `json:"accessRules"`
	} `json:"accessRules"`
}

// myRules are the caller's own grants: first those no rule gives (an API key's own binding as
// an app; the admin role of the bootstrap account and of --admin-subjects and --admin-groups),
// without an id, then, for a person, the access rules that name them or one of their groups,
// in the order they were made. search (in the subject, the role's title or the scope's name),
// offset and limit apply to the whole.
type myRules struct {
	unruled []views.RunAIMyAccessRule // the grants no rule gives, search applied
	person  *store.RuleHolder         // nil: not a person (an API key or the system)
}

func (h *runAIAuthorization) myRulesOf(c echo.Context, search string) (myRules, error) {
	ctx := c.Request().Context()
	id := identity(c)
	var out myRules
	var ruled []auth.Grant
	if id.SubjectType == "user" {
		uid, err := uuid.Parse(id.UserID)
		if err != nil {
			return out, err
		}
		u, err := h.users.User(ctx, uid)
		if err != nil {
			return out, err
		}
		out.person = &store.RuleHolder{Subject: u.Subject, Email: u.Email, Groups: u.Groups}
		rules, err := h.users.AccessRulesFor(ctx, u.Subject, u.Email, u.Groups)
		if err != nil {
			return out, err
		}
		for _, r := range rules {
			ruled = append(ruled, auth.Grant{Role: auth.Role(r.Role), Scope: scopeOf(r.ScopeType, r.ScopeID)})
		}
	}
	subjectType := "user"
	if id.SubjectType != "user" {
		subjectType = "app" // an API key, or Arbiter itself
	}
	for _, g := range id.Grants {
		if slices.Contains(ruled, g) {
			continue
		}
		name, err := h.scopeName(ctx, g.Scope)
		if err != nil {
			return out, err
		}
		scopeID := cmp.Or(g.Scope.ID, runAISystemScope.SystemScopeID)
		grant := runAIGrant(subjectType, id.Subject, g.Role, string(g.Scope.Type), scopeID, name, clusterID(c))
		text := strings.ToLower(strings.Join([]string{grant.SubjectID, grant.RoleName, grant.ScopeName}, " "))
		if strings.Contains(text, strings.ToLower(search)) {
			out.unruled = append(out.unruled, views.RunAIMyAccessRule{RunAIGrant: grant})
		}
	}
	return out, nil
}

// scopeName is the name of a grant's scope: the department's or the project's, "system" for
// the system scope, empty for one that is gone.
func (h *runAIAuthorization) scopeName(ctx context.Context, s auth.Scope) (string, error) {
	if s.Type == auth.ScopeSystem {
		return runAISystemScope.SystemScopeName, nil
	}
	id, err := uuid.Parse(s.ID)
	if err != nil {
		return "", nil
	}
	name := ""
	switch s.Type {
	case auth.ScopeDepartment:
		var d store.Department
		d, err = h.org.Department(ctx, id)
		name = d.Name
	case auth.ScopeProject:
		var p store.Project
		p, err = h.org.Project(ctx, id)
		name = p.Name
	}
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return name, err
}

// myQuery reads the parameters Run:ai's me routes take: search, offset and limit.
func myQuery(v url.Values) (listquery.Query, error) {
	only := url.Values{}
	for _, k := range []string{"search", "offset", "limit"} {
		if v.Has(k) {
			only.Set(k, v.Get(k))
		}
	}
	return listquery.Parse(only, store.NamedAccessRuleSpec)
}

// myRules is Run:ai's get_me_access_rules: one page of the caller's own grants (myRules).
func (h *runAIAuthorization) myRules(c echo.Context) error {
	q, err := myQuery(c.QueryParams())
	if err != nil {
		return err
	}
	mine, err := h.myRulesOf(c, q.Search)
	if err != nil {
		return err
	}
	var answer myRuleList
	page := mine.unruled[min(q.Offset, len(mine.unruled)):]
	page = page[:min(q.Limit, len(page))]
	answer.AccessRules.AccessRules = append([]views.RunAIMyAccessRule{}, page...)
	answer.AccessRules.TotalRecords = len(mine.unruled)
	if mine.person != nil {
		sel := runAISystemScope
		sel.Holder = mine.person
		rest := q
		rest.Offset, rest.Limit = max(0, q.Offset-len(mine.unruled)), q.Limit-len(page)
		var rules []store.NamedAccessRule
		var total int
		if rest.Limit > 0 {
			rules, total, err = h.users.NamedAccessRules(c.Request().Context(), rest, sel)
		} else {
			total, err = h.users.CountNamedAccessRules(c.Request().Context(), rest, sel)
		}
		if err != nil {
			return err
		}
		for _, r := range rules {
			n := r.Number
			answer.AccessRules.AccessRules = append(answer.AccessRules.AccessRules, views.RunAIMyAccessRule{ID: &n,
				RunAIGrant: runAIGrant(r.SubjectType, r.Subject, auth.Role(r.Role), r.ScopeType, r.ScopeKey, r.ScopeName, clusterID(c))})
		}
		answer.AccessRules.TotalRecords += total
	}
	answer.AccessRules.DisplayRecords = len(answer.AccessRules.AccessRules)
	return c.JSON(http.StatusOK, answer)
}

// countMyRules is Run:ai's count_me_access_rules: how many grants myRules lists over all pages.
func (h *runAIAuthorization) countMyRules(c echo.Context) error {
	q, err := myQuery(c.QueryParams())
	if err != nil {
		return err
	}
	mine, err := h.myRulesOf(c, q.Search)
	if err != nil {
		return err
	}
	n := len(mine.unruled)
	if mine.person != nil {
		sel := runAISystemScope
		sel.Holder = mine.person
		rules, err := h.users.CountNamedAccessRules(c.Request().Context(), q, sel)
		if err != nil {
			return err
		}
		n += rules
	}
	return c.JSON(http.StatusOK, countAnswer{Count: n})
}
