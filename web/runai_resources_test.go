package web_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/views"
)

// Run:ai's PATCH of a unit's resources replaces the quotas of the pools it names and keeps the
// others; PUT replaces them all. A department's are the admin's; a project's whoever may
// change its quotas (a department admin of its department, not a viewer or another's).
func TestRunAIResourcesPatchKeepsThePoolsItDoesNotName(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	create(t, w.srv, "/api/v1/node-pools", `{"name":"h100","labelKey":"arbiter.dev/node-pool"}`)
	admin := tokenOf(w.srv)
	project, department := "/api/v1/org-unit/projects/"+w.proj["A1"]+"/resources", "/api/v1/org-unit/departments/"+w.dept["A"]+"/resources"
	deserved := func(r response) map[string]int {
		t.Helper()
		out := map[string]int{}
		for _, q := range decode[[]views.Quota](t, r.body) {
			out[q.NodePool.Name] = q.GPU.Deserved
		}
		return out
	}
	steps := []struct {
		token, method, path, body string
		want                      map[string]int
	}{
		{admin, "PUT", department, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":20}},{"nodePool":{"name":"h100"},"gpu":{"deserved":8}}]`, map[string]int{"a100": 20, "h100": 8}},
		{admin, "PATCH", department, `[{"nodePool":{"name":"h100"},"gpu":{"deserved":6}}]`, map[string]int{"a100": 20, "h100": 6}},
		{admin, "PUT", project, `[{"nodePool":{"name":"a100"},"gpu":{"deserved":2}},{"nodePool":{"name":"h100"},"gpu":{"deserved":1}}]`, map[string]int{"a100": 2, "h100": 1}},
		{admin, "PATCH", project, `[{"nodePool":{"name":"h100"},"gpu":{"deserved":3}}]`, map[string]int{"a100": 2, "h100": 3}},
	}
	for _, s := range steps {
		r := doAs(t, w.srv, s.token, s.method, s.path, "application/json", s.body)
		if r.status != 200 {
			t.Fatalf("%s %s = %d %s", s.method, s.path, r.status, r.body)
		}
		if d := cmp.Diff(s.want, deserved(r)); d != "" {
			t.Errorf("%s %s %s (-want +got):\n%s", s.method, s.path, s.body, d)
		}
	}
	deptAdminA := newAPIKey(t, w.st, "department-admin", "department", w.dept["A"])
	deptAdminB := newAPIKey(t, w.st, "department-admin", "department", w.dept["B"])
	viewer := newAPIKey(t, w.st, "viewer", "project", w.proj["A1"])
	for _, c := range []struct {
		who, token, method, path string
		status                   int
	}{
		{"dept-a's admin, its project", deptAdminA, "PATCH", project, 200},
		{"dept-a's admin, its department", deptAdminA, "PATCH", department, 403},
		{"dept-b's admin, dept-a's project", deptAdminB, "PATCH", project, 404},
		{"a viewer of the project", viewer, "PATCH", project, 403},
	} {
		if r := doAs(t, w.srv, c.token, c.method, c.path, "application/json", `[{"nodePool":{"name":"h100"},"gpu":{"deserved":1}}]`); r.status != c.status {
			t.Errorf("%s: %s = %d %s, want %d", c.who, c.method, r.status, r.body, c.status)
		}
	}
}
