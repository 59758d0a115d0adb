package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
)

// TestRunAIAuthorizationRoutesByRoleAndScope walks roles × scopes × the authorization routes:
// only admins read, make or remove access rules (as on /api/v1/access-rules); every caller
// reads the roles, its own permissions and its own rules, and nothing of another project's
// rules comes through any route; without credentials every route is a 401.
func TestRunAIAuthorizationRoutesByRoleAndScope(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	// Project B's rule, which nobody but the admin may see.
	bobs := sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
		`{"subjectId":"bob@example.org","subjectType":"user","roleId":5,"scopeId":"`+w.proj["B1"]+`","scopeType":"project"}`, 201)
	ruleOfB := fmt.Sprintf("/api/v1/authorization/access-rules/%d", bobs.ID)
	newRule := `{"subjectId":"eve@example.org","subjectType":"user","roleId":5,"scopeId":"` + w.proj["B1"] + `","scopeType":"project"}`
	reads := []string{"/api/v1/authorization/access-rules", "/api/v1/authorization/access-rules/count", ruleOfB,
		"/api/v1/authorization/roles", "/api/v1/authorization/roles/1", "/api/v1/authorization/permissions",
		"/api/v1/authorization/me/access-rules", "/api/v1/authorization/me/access-rules/count"}

	for _, path := range reads {
		if r := doAs(t, w.srv, "", "GET", path, "", ""); r.status != 401 {
			t.Errorf("GET %s without credentials = %d %s", path, r.status, r.body)
		}
	}
	for _, x := range []struct{ method, path, body string }{{"POST", "/api/v1/authorization/access-rules", newRule}, {"DELETE", ruleOfB, ""}} {
		if r := doAs(t, w.srv, "", x.method, x.path, "application/json", x.body); r.status != 401 {
			t.Errorf("%s %s without credentials = %d %s", x.method, x.path, r.status, r.body)
		}
	}

	// The admin runs last: it removes project B's rule.
	cases := append(roleCases[1:], roleCases[0])
	for _, rc := range cases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			scopeType, scopeID := w.scopeID(rc.scope)
			token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
			rulesStatus := func(ok int) int {
				if rc.admin {
					return ok
				}
				return 403
			}
			for _, path := range reads {
				want := 200
				if strings.Contains(path, "/access-rules") && !strings.Contains(path, "/me/") {
					want = rulesStatus(200)
				}
				r := doAs(t, w.srv, token, "GET", path, "", "")
				if r.status != want {
					t.Errorf("GET %s = %d, want %d: %.300s", path, r.status, want, r.body)
				}
				if !rc.admin && (strings.Contains(string(r.body), "bob@example.org") || strings.Contains(string(r.body), w.proj["B1"])) {
					t.Errorf("GET %s shows project B's rule: %.500s", path, r.body)
				}
			}
			mine := decode[myRuleList](t, doAs(t, w.srv, token, "GET", "/api/v1/authorization/me/access-rules", "", "").body).AccessRules
			wantScope := scopeID
			if wantScope == "" {
				wantScope = "1"
			}
			if len(mine.AccessRules) != 1 || mine.AccessRules[0].SubjectType != "app" || mine.AccessRules[0].ScopeType != scopeType ||
				mine.AccessRules[0].ScopeID != wantScope || mine.AccessRules[0].RoleName == "" {
				t.Errorf("the key's own rules are %+v, want its binding at %s %s", mine, scopeType, wantScope)
			}

			made := doAs(t, w.srv, token, "POST", "/api/v1/authorization/access-rules", "application/json", newRule)
			if made.status != rulesStatus(201) {
				t.Errorf("POST a rule = %d, want %d: %s", made.status, rulesStatus(201), made.body)
			}
			if r := doAs(t, w.srv, token, "DELETE", ruleOfB, "", ""); r.status != rulesStatus(204) {
				t.Errorf("DELETE project B's rule = %d, want %d: %s", r.status, rulesStatus(204), r.body)
			}
		})
	}
	// What was refused did not happen: only the admin's rule was made and project B's removed.
	if got := getAs[runAIRules](t, w.srv, "/api/v1/authorization/access-rules"); got.TotalRecords != 1 || got.AccessRules[0].SubjectID != "eve@example.org" {
		t.Errorf("after every role tried, the rules are %+v; want only the admin's new one", got)
	}
}
