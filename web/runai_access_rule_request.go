package web

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// runAIAccessRuleRequest is Run:ai's AccessRuleCreationFields.
type runAIAccessRuleRequest struct {
	SubjectID   optional[string] `json:"subjectId"`
	SubjectType optional[string] `json:"subjectType"`
	RoleID      optional[int32]  `json:"roleId"`
	ScopeID     optional[string] `json:"scopeId"`
	ScopeType   optional[string] `json:"scopeType"`
	ClusterID   optional[string] `json:"clusterId"`
}

var runAIAccessRuleFields = []string{"subjectId", "subjectType", "roleId", "scopeId", "scopeType", "clusterId"}

// required is the value of a field Run:ai's schema requires.
func required[T any](field string, o optional[T], what string) (T, error) {
	if !o.Set || o.Null {
		var zero T
		return zero, badField(field, "%s is required: %s", field, what)
	}
	return o.Value, nil
}

// rule is the access rule r asks for, in Arbiter's terms, checked as Arbiter's own
// /api/v1/access-rules checks one (a known role at a scope it may be bound at). Run:ai's tenant
// and cluster scopes are Arbiter's system scope, as the installation is one tenant with one
// cluster; they must name that tenant or cluster. Applications are not subjects of rules: an
// API key's role is its own binding, given when it is made.
func (r runAIAccessRuleRequest) rule(cluster string) (store.NewAccessRule, error) {
	var n store.NewAccessRule
	if err := checkClusterID(r.ClusterID, cluster); err != nil {
		return n, err
	}
	subject, err := required("subjectId", r.SubjectID, "the user's email or subject, or the group's name")
	if err != nil {
		return n, err
	}
	if strings.TrimSpace(subject) == "" {
		return n, badField("subjectId", "subjectId is empty; send the user's email or subject, or the group's name")
	}
	if l := utf8.RuneCountInString(subject); l > maxRuleSubject {
		return n, badField("subjectId", "subjectId is %d characters long; the limit is %d", l, maxRuleSubject)
	}
	subjectType, err := required("subjectType", r.SubjectType, "user or group")
	if err != nil {
		return n, err
	}
	switch subjectType {
	case "user", "group":
	case "app", "service-account":
		return n, badField("subjectType", "subjectType %s: an application's role is its API key's own binding, given when the key is made (POST /api/v1/api-keys with role and scopeType); access rules name users and groups", subjectType)
	default:
		return n, badField("subjectType", "subjectType %q is not known; use user or group", subjectType)
	}
	roleID, err := required("roleId", r.RoleID, "one of "+roleChoices())
	if err != nil {
		return n, err
	}
	role, ok := auth.RoleByID(int64(roleID))
	if !ok {
		return n, badField("roleId", "roleId %d is not a role of Arbiter; use one of %s", roleID, roleChoices())
	}
	scopeType, err := required("scopeType", r.ScopeType, "system, tenant, cluster, department or project")
	if err != nil {
		return n, err
	}
	scopeID, err := required("scopeId", r.ScopeID, "the department's or project's id, or for the system scope the tenant's id, "+strconv.Quote(runAISystemScope.SystemScopeID))
	if err != nil {
		return n, err
	}
	scope, id, err := runAIScope(scopeType, scopeID, cluster)
	if err != nil {
		return n, err
	}
	if err := auth.ValidateGrant(role, scope); err != nil {
		return n, badField("roleId", "%s", err.Error())
	}
	return store.NewAccessRule{SubjectType: subjectType, Subject: subject, Role: string(role), ScopeType: string(scope.Type), ScopeID: id}, nil
}

// runAIScope is the Arbiter scope of Run:ai's scopeType and scopeId.
func runAIScope(scopeType, scopeID, cluster string) (auth.Scope, *uuid.UUID, error) {
	tenant := runAISystemScope.SystemScopeID
	switch scopeType {
	case "system":
		if scopeID != "" && scopeID != tenant {
			return auth.Scope{}, nil, badField("scopeId", "scopeId %q is not the system scope's id: the system scope is the installation's one tenant, %q (send that, or an empty scopeId)", scopeID, tenant)
		}
		return auth.System, nil, nil
	case "tenant":
		if scopeID != tenant {
			return auth.Scope{}, nil, badField("scopeId", "scopeId %q is not a tenant of this installation: it has one tenant, %q, which is Arbiter's system scope", scopeID, tenant)
		}
		return auth.System, nil, nil
	case "cluster":
		if scopeID != cluster {
			return auth.Scope{}, nil, badField("scopeId", "scopeId %q is not a cluster of this installation: it has one cluster, %s, which is Arbiter's system scope", scopeID, cluster)
		}
		return auth.System, nil, nil
	case "department", "project":
		id, err := uuid.Parse(scopeID)
		if err != nil || len(scopeID) != 36 {
			return auth.Scope{}, nil, badField("scopeId", "scopeId %q is not a %s's id; ids are UUIDs such as 6723b9d7-73d1-5e4c-a494-d8fdeddc541c", scopeID, scopeType)
		}
		return auth.Scope{Type: auth.ScopeType(scopeType), ID: id.String()}, &id, nil
	}
	return auth.Scope{}, nil, badField("scopeType", "scopeType %q is not known; use system, tenant, cluster, department or project (tenant and cluster are the system scope: the installation has one of each)", scopeType)
}
