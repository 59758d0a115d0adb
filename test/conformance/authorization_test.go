package conformance

import (
	"net/url"
	"strconv"
	"testing"
)

// authorizationRule is the number of the access rule the create check made, by organization.
var authorizationRule = map[*org]int{}

// ruleOf is the number of the access rule the create check made for o.
func ruleOf(t *testing.T, o *org) string {
	t.Helper()
	n, ok := authorizationRule[o]
	if !ok {
		t.Fatal("no access rule was made by POST /api/v1/authorization/access-rules")
	}
	return strconv.Itoa(n)
}

func init() {
	checked = append(checked, []struct {
		route string
		check func(t *testing.T, c *client, o *org)
	}{
		{"POST /api/v1/authorization/access-rules", func(t *testing.T, c *client, o *org) {
			var rule struct {
				ID        int
				ScopeName string
			}
			c.do(t, exchange{method: "POST", route: "/api/v1/authorization/access-rules", body: map[string]any{"subjectId": "ada@example.org",
				"subjectType": "user", "roleId": 4, "scopeId": o.projectID, "scopeType": "project", "clusterId": c.clusterID(t, o)}, want: 201, out: &rule})
			if rule.ID < 1 || rule.ScopeName != "vision" {
				t.Errorf("the rule made is %+v, want a number and the project's name", rule)
			}
			authorizationRule[o] = rule.ID
			c.do(t, exchange{method: "POST", route: "/api/v1/authorization/access-rules", body: map[string]any{"subjectId": "ml-team",
				"subjectType": "group", "roleId": 5, "scopeId": "1", "scopeType": "tenant"}, want: 201})
			c.refusedNaming(t, exchange{method: "POST", route: "/api/v1/authorization/access-rules", body: map[string]any{"subjectId": "ml-team",
				"subjectType": "group", "roleId": 5, "scopeId": foreignClusterID, "scopeType": "cluster"}, want: 400}, c.clusterID(t, o))
		}},
		{"GET /api/v1/authorization/access-rules", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/access-rules", want: 200})
			var filtered struct {
				TotalRecords int
				AccessRules  []struct{ SubjectID string }
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/access-rules", query: url.Values{"filterBy": {"roleId==4"},
				"sortBy": {"subjectId"}, "sortOrder": {"desc"}, "offset": {"0"}, "limit": {"10"}, "subjectType": {"user"}}, want: 200, out: &filtered})
			if filtered.TotalRecords != 1 || len(filtered.AccessRules) != 1 || filtered.AccessRules[0].SubjectID != "ada@example.org" {
				t.Errorf("rules filtered by roleId==4 are %+v, want Ada's", filtered)
			}
		}},
		{"GET /api/v1/authorization/access-rules/count", func(t *testing.T, c *client, o *org) {
			counted(t, c, "/api/v1/authorization/access-rules/count", nil, 2)
			counted(t, c, "/api/v1/authorization/access-rules/count", url.Values{"filterBy": {"scopeType==system"}, "search": {"ml"}}, 1)
		}},
		{"GET /api/v1/authorization/access-rules/{accessRuleId}", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/access-rules/{accessRuleId}", params: map[string]string{"accessRuleId": ruleOf(t, o)}, want: 200})
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/access-rules/{accessRuleId}", params: map[string]string{"accessRuleId": "999999"}, want: 404})
		}},
		{"GET /api/v1/authorization/roles", func(t *testing.T, c *client, o *org) {
			var roles []struct{ ID int }
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/roles", want: 200, out: &roles})
			if len(roles) != 5 {
				t.Errorf("the roles are %v, want Arbiter's five", roles)
			}
		}},
		{"GET /api/v1/authorization/roles/{roleIdPath}", func(t *testing.T, c *client, o *org) {
			for id := 1; id <= 5; id++ {
				c.do(t, exchange{method: "GET", route: "/api/v1/authorization/roles/{roleIdPath}", params: map[string]string{"roleIdPath": strconv.Itoa(id)}, want: 200})
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/roles/{roleIdPath}", params: map[string]string{"roleIdPath": "6"}, want: 404})
		}},
		{"GET /api/v1/authorization/permissions", func(t *testing.T, c *client, o *org) {
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/permissions", want: 200})
		}},
		{"GET /api/v1/authorization/me/access-rules", func(t *testing.T, c *client, o *org) {
			// The admin signed in as the bootstrap account: its admin role, which no rule gives.
			var mine struct {
				AccessRules struct {
					AccessRules []struct{ RoleID int }
				}
			}
			c.do(t, exchange{method: "GET", route: "/api/v1/authorization/me/access-rules", query: url.Values{"offset": {"0"}, "limit": {"10"}}, want: 200, out: &mine})
			if len(mine.AccessRules.AccessRules) != 1 || mine.AccessRules.AccessRules[0].RoleID != 1 {
				t.Errorf("the admin's own rules are %+v, want its admin role", mine)
			}
		}},
		{"GET /api/v1/authorization/me/access-rules/count", func(t *testing.T, c *client, o *org) {
			counted(t, c, "/api/v1/authorization/me/access-rules/count", nil, 1)
			counted(t, c, "/api/v1/authorization/me/access-rules/count", url.Values{"search": {"nothing-is-called-this"}}, 0)
		}},
		{"DELETE /api/v1/authorization/access-rules/{accessRuleId}", func(t *testing.T, c *client, o *org) {
			route := "/api/v1/authorization/access-rules/{accessRuleId}"
			c.do(t, exchange{method: "DELETE", route: route, params: map[string]string{"accessRuleId": ruleOf(t, o)}, want: 204})
			c.do(t, exchange{method: "GET", route: route, params: map[string]string{"accessRuleId": ruleOf(t, o)}, want: 404})
		}},
	}...)
}
