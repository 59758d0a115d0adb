package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// TestRunAIFieldsInRequests: Run:ai's names of organization fields are accepted when they say
// what Arbiter is, and a request that contradicts Arbiter, or names one thing twice
// differently, is refused with a 400 whose sentence starts with the field.
func TestRunAIFieldsInRequests(t *testing.T) {
	t.Parallel()
	srv, _, pool, dept, proj := orgAPI(t)
	cluster := store.SeedID("cluster", "arbiter").String()
	foreign := "00000000-0000-4000-8000-000000000001"
	for _, c := range []struct {
		what, method, path, body string
		field, says              string // "" field: accepted
	}{
		{"a pool in the one cluster", "POST", "/api/v1/node-pools", `{"name":"h100","labelKey":"arbiter.dev/node-pool","clusterId":"` + cluster + `"}`, "", ""},
		{"a pool in another cluster", "POST", "/api/v1/node-pools", `{"name":"l4","labelKey":"arbiter.dev/node-pool","clusterId":"` + foreign + `"}`, "clusterId", cluster},
		{"a department in another cluster", "POST", "/api/v1/org-unit/departments", `{"name":"platform","clusterId":"` + foreign + `"}`, "clusterId", cluster},
		{"a department moved to another cluster", "PUT", "/api/v1/org-unit/departments/" + dept, `{"clusterId":"` + foreign + `"}`, "clusterId", cluster},
		{"a project by parentId and requestedNamespace", "POST", "/api/v1/org-unit/projects",
			fmt.Sprintf(`{"name":"beta","parentId":%q,"requestedNamespace":"team-beta","clusterId":%q,"enforceRunaiScheduler":true}`, dept, cluster), "", ""},
		{"a project in another cluster", "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"gamma","parentId":%q,"clusterId":%q}`, dept, foreign), "clusterId", cluster},
		{"two different departments", "POST", "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"gamma","parentId":%q,"departmentId":%q}`, dept, pool), "parentId", "differ"},
		{"namespaces twice", "PUT", "/api/v1/org-unit/projects/" + proj, `{"requestedNamespace":"x","namespaces":["y"]}`, "requestedNamespace", "one of them"},
		{"another scheduler", "PUT", "/api/v1/org-unit/projects/" + proj, `{"enforceRunaiScheduler":false}`, "enforceRunaiScheduler", "cannot be false"},
	} {
		want := 201
		if c.method == "PUT" {
			want = 200
		}
		if c.field != "" {
			want = 400
		}
		r := do(t, srv, c.method, c.path, "application/json", c.body)
		m := jsonBody(t, r)
		msg, _ := m["message"].(string)
		if r.status != want || (c.field != "" && (!strings.HasPrefix(msg, c.field) || !strings.Contains(msg, c.says))) {
			t.Errorf("%s: %d %s; want %d naming %q and saying %q", c.what, r.status, r.body, want, c.field, c.says)
		}
	}
	beta := list[views.Project](t, srv, "/api/v1/org-unit/projects?filterBy=name==beta", "projects")
	if len(beta) != 1 || beta[0].DepartmentID != dept || strings.Join(beta[0].Namespaces, ",") != "team-beta" {
		t.Errorf("the project made with Run:ai's names is %+v, want in %s with namespace team-beta", beta, dept)
	}
}
