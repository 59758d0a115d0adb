package web_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

// orgWorld is two departments (dept-a, dept-b), three projects (alpha-one and alpha-two in
// dept-a, beta-one in dept-b), a pool a100 and an empty department dept-c, made by the admin.
type orgWorld struct {
	srv   *httptest.Server
	st    *store.Store
	pool  string
	dept  map[string]string // "A", "B", "C" -> id
	proj  map[string]string // "A1", "A2", "B1" -> id
	names map[string]string // the same keys -> names
}

func newOrgWorld(t *testing.T) *orgWorld {
	t.Helper()
	srv, st := newAPI(t)
	w := &orgWorld{srv: srv, st: st, dept: map[string]string{}, proj: map[string]string{},
		names: map[string]string{"A": "dept-a", "B": "dept-b", "C": "dept-c", "A1": "alpha-one", "A2": "alpha-two", "B1": "beta-one"}}
	w.pool = create(t, srv, "/api/v1/node-pools", `{"name":"a100","labelKey":"arbiter.dev/node-pool"}`)
	for _, d := range []string{"A", "B", "C"} {
		w.dept[d] = create(t, srv, "/api/v1/org-unit/departments",
			`{"name":"`+w.names[d]+`","resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":20}}]}`)
	}
	for _, p := range []string{"A1", "A2", "B1"} {
		w.proj[p] = create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,
			"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":2}}]}`, w.names[p], w.dept[p[:1]]))
	}
	return w
}

// scopeID is the id of a scope named "system", "A" or "A1".
func (w *orgWorld) scopeID(scope string) (scopeType, id string) {
	switch len(scope) {
	case 1:
		return "department", w.dept[scope]
	case 2:
		return "project", w.proj[scope]
	}
	return "system", ""
}

// roleCase is what one role at one scope may see and change, written out in full.
type roleCase struct {
	role, scope string
	depts       string // departments it sees (of A, B, C)
	projects    string // projects it sees
	policy      string // projects whose policy it may change
	manage      string // projects it may change otherwise (quotas, department) and delete
	createIn    string // departments it may create projects in
	admin       bool   // departments and node pools
}

var roleCases = []roleCase{
	{role: "admin", scope: "system", depts: "A,B,C", projects: "A1,A2,B1", policy: "A1,A2,B1", manage: "A1,A2,B1", createIn: "A,B", admin: true},
	{role: "department-admin", scope: "A", depts: "A", projects: "A1,A2", policy: "A1,A2", manage: "A1,A2", createIn: "A"},
	{role: "research-manager", scope: "system", depts: "A,B,C", projects: "A1,A2,B1", policy: "A1,A2,B1"},
	{role: "research-manager", scope: "A", depts: "A", projects: "A1,A2", policy: "A1,A2"},
	{role: "research-manager", scope: "A1", projects: "A1", policy: "A1"},
	{role: "researcher", scope: "system", depts: "A,B,C", projects: "A1,A2,B1"},
	{role: "researcher", scope: "A", depts: "A", projects: "A1,A2"},
	{role: "researcher", scope: "A1", projects: "A1"},
	{role: "viewer", scope: "system", depts: "A,B,C", projects: "A1,A2,B1"},
	{role: "viewer", scope: "A", depts: "A", projects: "A1,A2"},
	{role: "viewer", scope: "A1", projects: "A1"},
}

func has(list, x string) bool { return slices.Contains(strings.Split(list, ","), x) }

// changeStatus is the answer to a change of project x that needs the rights listed in allowed:
// done (ok) where allowed; 403 where the caller sees x, or may make such changes nowhere;
// 404 where it may make them elsewhere but does not see x (ids reveal nothing).
func (rc roleCase) changeStatus(x, allowed string, ok int) int {
	switch {
	case has(allowed, x):
		return ok
	case has(rc.projects, x) || allowed == "":
		return 403
	}
	return 404
}

// TestRolesSeeAndChangeOnlyTheirScope walks roles × scopes × routes (API lists and gets,
// pages, CSV downloads; creates, updates and deletes through the API and the pages) and
// asserts exactly what each caller sees and may change.
func TestRolesSeeAndChangeOnlyTheirScope(t *testing.T) {
	t.Parallel()
	for _, rc := range roleCases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			t.Parallel()
			w := newOrgWorld(t)
			scopeType, scopeID := w.scopeID(rc.scope)
			token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
			call := func(method, path, body string) response {
				contentType := "application/json"
				if !strings.HasPrefix(path, "/api/") {
					contentType = "application/x-www-form-urlencoded"
				}
				return doAs(t, w.srv, token, method, path, contentType, body)
			}
			expect := func(what string, got response, want int) {
				t.Helper()
				if got.status != want {
					t.Errorf("%s = %d, want %d: %.300s", what, got.status, want, got.body)
				}
			}
			w.checkReads(t, rc, call)
			// Read as the admin, to check below that what was refused did not happen.
			b1Before := getAs[views.Project](t, w.srv, "/api/v1/org-unit/projects/"+w.proj["B1"])
			aBefore := getAs[views.Department](t, w.srv, "/api/v1/org-unit/departments/"+w.dept["A"])

			// Changes, ordered so that none hides another: policy, quotas, creates, the admin's
			// objects, a move, deletes.
			for _, x := range []string{"A1", "B1"} {
				expect("PUT policy of "+x, call("PUT", "/api/v1/org-unit/projects/"+w.proj[x], `{"policy":{"queueing":"strict"}}`), rc.changeStatus(x, rc.policy, 200))
				expect("PUT resources of "+x, call("PUT", "/api/v1/org-unit/projects/"+w.proj[x]+"/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":3}}]`), rc.changeStatus(x, rc.manage, 200))
				expect("PUT namespaces of "+x, call("PUT", "/api/v1/org-unit/projects/"+w.proj[x], `{"namespaces":["ns-`+strings.ToLower(x)+`"]}`), rc.changeStatus(x, rc.manage, 200))
			}
			// Pages: a successful form redirects back to the page (followed: 200).
			expect("page: policy of A2", call("POST", "/projects/"+w.proj["A2"]+"/policy", "queueing=strict&preemptionOrder=newest"), rc.changeStatus("A2", rc.policy, 200))
			expect("page: quota of A2", call("POST", "/projects/"+w.proj["A2"]+"/quotas/"+w.pool, "deserved=4"), rc.changeStatus("A2", rc.manage, 200))
			expect("page: quota of B1", call("POST", "/projects/"+w.proj["B1"]+"/quotas/"+w.pool, "deserved=4"), rc.changeStatus("B1", rc.manage, 200))
			for _, d := range []string{"A", "B"} {
				want := 403
				if has(rc.createIn, d) {
					want = 201
				}
				expect("POST project in "+d, call("POST", "/api/v1/org-unit/projects", `{"name":"new-`+strings.ToLower(d)+`","departmentId":"`+w.dept[d]+`"}`), want)
				if want == 201 {
					want = 200
				}
				expect("page: create project in "+d, call("POST", "/projects", "name=form-"+strings.ToLower(d)+"&departmentId="+w.dept[d]), want)
			}
			adminOnly := func(ok int) int {
				if rc.admin {
					return ok
				}
				return 403
			}
			expect("PUT quota of department A", call("PUT", "/api/v1/org-unit/departments/"+w.dept["A"], `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":30}}]}`), adminOnly(200))
			expect("PUT name of department A", call("PUT", "/api/v1/org-unit/departments/"+w.dept["A"], `{"name":"dept-a2"}`), adminOnly(200))
			expect("POST department", call("POST", "/api/v1/org-unit/departments", `{"name":"dept-new"}`), adminOnly(201))
			expect("PUT node pool", call("PUT", "/api/v1/node-pools/"+w.pool, `{"placement":"spread"}`), adminOnly(200))
			expect("page: quota of department A", call("POST", "/departments/"+w.dept["A"]+"/quotas/"+w.pool, "deserved=31"), adminOnly(200))
			expect("move A1 to department B", call("PUT", "/api/v1/org-unit/projects/"+w.proj["A1"], `{"departmentId":"`+w.dept["B"]+`"}`), adminOnly(200))
			expect("DELETE department C", call("DELETE", "/api/v1/org-unit/departments/"+w.dept["C"], ""), adminOnly(204))
			expect("DELETE A2", call("DELETE", "/api/v1/org-unit/projects/"+w.proj["A2"], ""), rc.changeStatus("A2", rc.manage, 204))
			expect("page: delete B1", call("POST", "/projects/"+w.proj["B1"]+"/delete", ""), rc.changeStatus("B1", rc.manage, 200))

			// What was refused did not happen: a project nobody but the admin may change keeps
			// its values (read as the admin).
			if !rc.admin {
				b1 := getAs[views.Project](t, w.srv, "/api/v1/org-unit/projects/"+w.proj["B1"])
				if diff := cmp.Diff(b1Before.Resources, b1.Resources); !has(rc.manage, "B1") && diff != "" {
					t.Errorf("B1's quota changed although refused (-before +after):\n%s", diff)
				}
				if diff := cmp.Diff(b1Before.Policy, b1.Policy); !has(rc.policy, "B1") && diff != "" {
					t.Errorf("B1's policy changed although refused (-before +after):\n%s", diff)
				}
				a := getAs[views.Department](t, w.srv, "/api/v1/org-unit/departments/"+w.dept["A"])
				type nameAndQuotas struct {
					Name      string
					Resources []views.Quota
				}
				if diff := cmp.Diff(nameAndQuotas{aBefore.Name, aBefore.Resources}, nameAndQuotas{a.Name, a.Resources}); diff != "" {
					t.Errorf("department A changed although refused (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// checkReads asserts what rc sees through every read route.
func (w *orgWorld) checkReads(t *testing.T, rc roleCase, call func(method, path, body string) response) {
	t.Helper()
	keysOf := func(names []string) string {
		var out []string
		for _, n := range names {
			for k, name := range w.names {
				if n == name {
					out = append(out, k)
				}
			}
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	get := func(path string) response {
		t.Helper()
		r := call("GET", path, "")
		if r.status != 200 {
			t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
		}
		return r
	}
	projects := func(path string) listed[views.Project] {
		t.Helper()
		return decodeList[views.Project](t, get(path).body, "projects")
	}
	projectNames := func(ps []views.Project) []string {
		return strings.Split(namesOf(ps, func(p views.Project) string { return p.Name }), ",")
	}
	depts := decodeList[views.Department](t, get("/api/v1/org-unit/departments").body, "departments").Items
	if got := keysOf(strings.Split(namesOf(depts, func(d views.Department) string { return d.Name }), ",")); got != rc.depts {
		t.Errorf("department list = %q, want %q", got, rc.depts)
	}
	if got := keysOf(projectNames(projects("/api/v1/org-unit/projects").Items)); got != rc.projects {
		t.Errorf("project list = %q, want %q", got, rc.projects)
	}
	// Paging counts only what the caller sees: one project a page, as many pages as projects.
	var paged []views.Project
	for offset := 0; offset < 10; {
		page := projects(fmt.Sprintf("/api/v1/org-unit/projects?limit=1&offset=%d", offset))
		paged = append(paged, page.Items...)
		if page.Next == nil {
			break
		}
		offset = *page.Next
	}
	if got := keysOf(projectNames(paged)); got != rc.projects {
		t.Errorf("project pages of one = %q, want %q", got, rc.projects)
	}
	if pools := decodeList[views.NodePoolAnswer](t, get("/api/v1/node-pools").body, "nodePools").Items; len(pools) != 2 {
		t.Errorf("node pools = %d, want both (a100 and default): every signed-in caller sees them", len(pools))
	}
	for k, id := range w.dept {
		want := 404
		if has(rc.depts, k) {
			want = 200
		}
		if r := call("GET", "/api/v1/org-unit/departments/"+id, ""); r.status != want {
			t.Errorf("GET department %s = %d, want %d", k, r.status, want)
		}
	}
	for k, id := range w.proj {
		want := 404
		if has(rc.projects, k) {
			want = 200
		}
		if r := call("GET", "/api/v1/org-unit/projects/"+id, ""); r.status != want {
			t.Errorf("GET project %s = %d, want %d", k, r.status, want)
		}
	}
	// Pages and CSV downloads show the same, and offer only the changes the caller may make.
	for _, path := range []string{"/projects", "/projects.csv", "/departments", "/departments.csv"} {
		r := call("GET", path, "")
		if r.status != 200 {
			t.Fatalf("GET %s = %d: %.300s", path, r.status, r.body)
		}
		body, keys, seen := string(r.body), []string{"A1", "A2", "B1"}, rc.projects
		if strings.HasPrefix(path, "/departments") {
			keys, seen = []string{"A", "B", "C"}, rc.depts
		}
		for _, k := range keys {
			if shown := strings.Contains(body, w.names[k]); shown != has(seen, k) {
				t.Errorf("GET %s shows %s: %v, want %v", path, w.names[k], shown, !shown)
			}
		}
		if path != "/projects" {
			continue
		}
		for _, k := range keys {
			id := w.proj[k]
			for what, allowed := range map[string]string{"/policy": rc.policy, "/delete": rc.manage, "/quotas/" + w.pool: rc.manage} {
				if offered := strings.Contains(body, `hx-post="/projects/`+id+what+`"`); offered != has(allowed, k) {
					t.Errorf("/projects offers %s of %s: %v, want %v", what, k, offered, !offered)
				}
			}
		}
		if offered := strings.Contains(body, `method="post" action="/projects"`); offered != (rc.createIn != "") {
			t.Errorf("/projects offers the new-project form: %v, want %v", offered, !offered)
		}
	}
}
