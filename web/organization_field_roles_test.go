package web_test

import (
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

// The rule of docs/security.md "Who changes which organization field": a field that changes
// what other units receive needs the role of the unit above the one it belongs to. Written out
// here in full, independently of the server's table, so that a change of either is noticed.

// fieldNeeds is who may change a field: the project's research manager ("project"), its
// department's admin ("department") or only an admin ("admin").
type fieldNeeds string

const (
	projectManager  fieldNeeds = "project"
	departmentAdmin fieldNeeds = "department"
	adminOnly       fieldNeeds = "admin"
)

// fieldCase changes one field (or a mix) of project A1 with one request.
type fieldCase struct {
	field        string
	method, path string // path's {p} is project A1's id
	body         string // {pool} is the a100 pool's id
	needs        fieldNeeds
}

var projectFieldCases = []fieldCase{
	{"policy.defaultPriorityId", "PUT", "", `{"policy":{"defaultPriorityId":"8b9a07f1-b0a7-54f4-90ba-cc15d235eaf6"}}`, projectManager},
	{"policy.allowPriorityChange", "PUT", "", `{"policy":{"allowPriorityChange":false}}`, projectManager},
	{"policy.allowPreemptibilityChange", "PUT", "", `{"policy":{"allowPreemptibilityChange":false}}`, projectManager},
	{"policy.minPriority", "PUT", "", `{"policy":{"minPriority":"very-low"}}`, projectManager},
	{"policy.maxPriority", "PUT", "", `{"policy":{"maxPriority":"very-high"}}`, projectManager},
	{"policy.preemptionOrder", "PUT", "", `{"policy":{"preemptionOrder":"newest"}}`, projectManager},
	{"policy.preemptionMode", "PUT", "", `{"policy":{"preemptionMode":"suspend"}}`, projectManager},
	{"policy.minRuntimeSeconds", "PUT", "", `{"policy":{"minRuntimeSeconds":300}}`, projectManager},
	{"policy.queueing", "PUT", "", `{"policy":{"queueing":"strict"}}`, projectManager},
	{"policy.priorityPolicy", "PUT", "", `{"policy":{"priorityPolicy":"open"}}`, departmentAdmin},
	{"policy.priorityOffset", "PUT", "", `{"policy":{"priorityOffset":10}}`, departmentAdmin},
	{"policy.preemptionDelaySeconds", "PUT", "", `{"policy":{"preemptionDelaySeconds":60}}`, departmentAdmin},
	{"policy.reclaimMinRuntimeSeconds", "PUT", "", `{"policy":{"reclaimMinRuntimeSeconds":600}}`, departmentAdmin},
	{"policy (an inside field with an offset)", "PUT", "", `{"policy":{"queueing":"best-effort","priorityOffset":5}}`, departmentAdmin},
	{"policy (null: every field to its default)", "PUT", "", `{"policy":null}`, departmentAdmin},
	{"name", "PUT", "", `{"name":"alpha-renamed"}`, departmentAdmin},
	{"namespaces", "PUT", "", `{"namespaces":["ns-alpha"]}`, departmentAdmin},
	{"nodePools", "PUT", "", `{"nodePools":["{pool}"]}`, departmentAdmin},
	{"resources.deserved", "PUT", "", `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":3}}]}`, departmentAdmin},
	{"resources.limit", "PUT", "", `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":3,"limit":6}}]}`, departmentAdmin},
	{"resources.overQuotaWeight", "PUT", "", `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":3,"limit":6,"overQuotaWeight":5}}]}`, departmentAdmin},
	{"resources (the quotas route)", "PUT", "/resources", `[{"nodePool":{"name":"a100"},"gpu":{"deserved":4}}]`, departmentAdmin},
}

// fieldRole is one caller of the walk.
type fieldRole struct {
	name, role, scope string // scope as orgWorld.scopeID reads it
	is                fieldNeeds
	seesA1            bool
}

var fieldRoles = []fieldRole{
	{"research manager of the project", "research-manager", "A1", projectManager, true},
	{"department admin of another department", "department-admin", "B", departmentAdmin, false},
	{"department admin of the project's department", "department-admin", "A", departmentAdmin, true},
	{"admin", "admin", "system", adminOnly, true},
}

// mayChange is the rule: a role may change a field that needs its level or one below.
func (r fieldRole) mayChange(needs fieldNeeds) bool {
	rank := map[fieldNeeds]int{projectManager: 0, departmentAdmin: 1, adminOnly: 2}
	return rank[r.is] >= rank[needs]
}

// wantStatus is the answer to r's change of A1: done where the rule allows it; else 403 where
// the caller sees A1 or may make such changes on no project at all; else 404 (ids reveal
// nothing to who may not read them).
func (r fieldRole) wantStatus(needs fieldNeeds) int {
	switch {
	case r.seesA1 && r.mayChange(needs):
		return 200
	case r.seesA1 || !r.mayChange(needs):
		return 403
	}
	return 404
}

// TestOrganizationFieldsNeedTheRoleAboveWhenTheyReachOtherUnits walks every field of the
// project routes × the four callers that matter, asserting the answer and that a refused
// request wrote nothing at all, then the department's fields and the console's policy form.
func TestOrganizationFieldsNeedTheRoleAboveWhenTheyReachOtherUnits(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	tokens := map[string]string{}
	for _, r := range fieldRoles {
		scopeType, scopeID := w.scopeID(r.scope)
		tokens[r.name] = newAPIKey(t, w.st, r.role, scopeType, scopeID)
	}
	a1 := "/api/v1/org-unit/projects/" + w.proj["A1"]
	for _, fc := range projectFieldCases {
		body := strings.ReplaceAll(fc.body, "{pool}", w.pool)
		for _, r := range fieldRoles {
			before := getAs[views.Project](t, w.srv, a1)
			got := doAs(t, w.srv, tokens[r.name], fc.method, a1+fc.path, "application/json", body)
			want := r.wantStatus(fc.needs)
			if got.status != want {
				t.Errorf("%s changing %s = %d, want %d: %.300s", r.name, fc.field, got.status, want, got.body)
				continue
			}
			if want == 200 {
				continue
			}
			if diff := cmp.Diff(before, getAs[views.Project](t, w.srv, a1)); diff != "" {
				t.Errorf("%s's refused change of %s was written (-before +after):\n%s", r.name, fc.field, diff)
			}
			if msg := decode[apiError](t, got.body).Message; want == 403 && !strings.Contains(msg, fieldName(fc.field)) {
				t.Errorf("%s's refusal of %s does not name the field: %s", r.name, fc.field, msg)
			}
		}
	}
	// Moving a project needs the department admin of both departments: here, only the admin.
	// The department admin of B may move projects into B, but does not see A1 (404).
	moveStatus := map[string]int{"research manager of the project": 403, "department admin of another department": 404,
		"department admin of the project's department": 403, "admin": 200}
	for _, r := range fieldRoles {
		got := doAs(t, w.srv, tokens[r.name], "PUT", a1, "application/json", `{"departmentId":"`+w.dept["B"]+`"}`)
		if want := moveStatus[r.name]; got.status != want {
			t.Errorf("%s moving A1 to department B = %d, want %d: %.300s", r.name, got.status, want, got.body)
		}
	}

	t.Run("department fields are the admin's", func(t *testing.T) {
		deptA := "/api/v1/org-unit/departments/" + w.dept["A"]
		for _, body := range []string{`{"name":"dept-a-renamed"}`, `{"resources":[{"nodePool":{"name":"a100"},"gpu":{"deserved":25}}]}`,
			`{"priorityPolicy":"open"}`, `{"priorityOffset":10}`} {
			for _, r := range fieldRoles {
				before := getAs[views.Department](t, w.srv, deptA)
				got := doAs(t, w.srv, tokens[r.name], "PUT", deptA, "application/json", body)
				want := 403
				if r.is == adminOnly {
					want = 200
				}
				if got.status != want {
					t.Errorf("%s PUT %s on department A = %d, want %d: %.300s", r.name, body, got.status, want, got.body)
				}
				if diff := cmp.Diff(before, getAs[views.Department](t, w.srv, deptA)); want != 200 && diff != "" {
					t.Errorf("%s's refused PUT %s was written (-before +after):\n%s", r.name, body, diff)
				}
			}
		}
	})

	t.Run("the console's policy form", func(t *testing.T) {
		// A project of its own, so that the walk above does not decide what the form shows.
		id := create(t, w.srv, "/api/v1/org-unit/projects", `{"name":"form-project","departmentId":"`+w.dept["A"]+`"}`)
		rm := newAPIKey(t, w.st, "research-manager", "project", id)
		// What each caller's form offers: the fields it may change, no other.
		offers := map[string]map[string]bool{
			rm: {"queueing": true, "minRuntimeSeconds": true, "priorityOffset": false, "priorityPolicy": false,
				"preemptionDelaySeconds": false, "reclaimMinRuntimeSeconds": false},
			tokens["department admin of the project's department"]: {"queueing": true, "priorityOffset": true, "priorityPolicy": true,
				"preemptionDelaySeconds": true, "reclaimMinRuntimeSeconds": true},
			tokens["admin"]: {"priorityOffset": true, "reclaimMinRuntimeSeconds": true},
		}
		for token, fields := range offers {
			page := string(doAs(t, w.srv, token, "GET", "/projects?search=form-project", "", "").body)
			form := policyForm(t, page, id)
			for f, want := range fields {
				if got := strings.Contains(form, `name="`+f+`"`); got != want {
					t.Errorf("policy form offers %s: %v, want %v", f, got, want)
				}
			}
		}
		// The research manager's own form saves; a forged offset is refused with the API's sentence.
		path := "/projects/" + id + "/policy"
		if got := doAs(t, w.srv, rm, "POST", path, "application/x-www-form-urlencoded", "queueing=strict&minRuntimeSeconds=60"); got.status != 200 {
			t.Errorf("research manager saving the policy form = %d, want 200: %.300s", got.status, got.body)
		}
		before := getAs[views.Project](t, w.srv, "/api/v1/org-unit/projects/"+id)
		page := doAs(t, w.srv, rm, "POST", path, "application/x-www-form-urlencoded", "queueing=best-effort&priorityOffset=5")
		api := doAs(t, w.srv, rm, "PUT", "/api/v1/org-unit/projects/"+id, "application/json", `{"policy":{"queueing":"best-effort","priorityOffset":5}}`)
		sentence := decode[apiError](t, api.body).Message
		if page.status != 403 || api.status != 403 || !strings.Contains(string(page.body), html.EscapeString(sentence)) {
			t.Errorf("forged offset: page %d, API %d; the page must say the API's sentence %q: %.500s", page.status, api.status, sentence, page.body)
		}
		if diff := cmp.Diff(before, getAs[views.Project](t, w.srv, "/api/v1/org-unit/projects/"+id)); diff != "" {
			t.Errorf("the refused form was written (-before +after):\n%s", diff)
		}
	})
}

// fieldName is the field a case's refusal must name: its name without the words after it.
func fieldName(field string) string {
	name, _, _ := strings.Cut(field, " ")
	switch {
	case strings.HasPrefix(name, "resources"):
		return "resources"
	case field == "policy (null: every field to its default)":
		return "policy.priorityPolicy"
	case strings.HasPrefix(field, "policy ("):
		return "policy.priorityOffset"
	}
	return name
}

// policyForm is the policy form of project id on a Projects page.
func policyForm(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `action="/projects/`+id+`/policy"`)
	if start < 0 {
		return ""
	}
	end := strings.Index(page[start:], "</form>")
	if end < 0 {
		t.Fatalf("the policy form of %s does not end", id)
	}
	return page[start : start+end]
}

// The bounds of docs/security.md "Bounds on organization numbers": past each, a 400 that names
// the field and the bound, and nothing written; at the bound (or, for a project's deserved
// GPUs, within what its department has), accepted.
func TestOrganizationNumbersHaveDocumentedBounds(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	a1 := "/api/v1/org-unit/projects/" + w.proj["A1"]
	deptA := "/api/v1/org-unit/departments/" + w.dept["A"]
	quota := func(gpu string) string { return `[{"nodePool":{"name":"a100"},"gpu":` + gpu + `}]` }
	for _, tc := range []struct {
		name, method, path, contentType string
		over, within                    string // bodies past the bound and within it
		field, bound                    string // what the 400 must name
	}{
		{"reclaim minimum runtime", "PUT", a1, "application/json", `{"policy":{"reclaimMinRuntimeSeconds":86401}}`, `{"policy":{"reclaimMinRuntimeSeconds":86400}}`, "reclaimMinRuntimeSeconds", "86400"},
		{"preemption delay", "PUT", a1, "application/json", `{"policy":{"preemptionDelaySeconds":86401}}`, `{"policy":{"preemptionDelaySeconds":86400}}`, "preemptionDelaySeconds", "86400"},
		{"minimum runtime", "PUT", a1, "application/json", `{"policy":{"minRuntimeSeconds":604801}}`, `{"policy":{"minRuntimeSeconds":604800}}`, "minRuntimeSeconds", "604800"},
		{"project priority offset above", "PUT", a1, "application/json", `{"policy":{"priorityOffset":1001}}`, `{"policy":{"priorityOffset":1000}}`, "priorityOffset", "1000"},
		{"project priority offset below", "PUT", a1, "application/json", `{"policy":{"priorityOffset":-1001}}`, `{"policy":{"priorityOffset":-1000}}`, "priorityOffset", "-1000"},
		{"department priority offset", "PUT", deptA, "application/json", `{"priorityOffset":1001}`, `{"priorityOffset":1000}`, "priorityOffset", "1000"},
		{"project deserved", "PUT", a1 + "/resources", "application/json", quota(`{"deserved":100001}`), quota(`{"deserved":18}`), "deserved", "100000"},
		{"project limit", "PUT", a1 + "/resources", "application/json", quota(`{"deserved":1,"limit":100001}`), quota(`{"deserved":1,"limit":100000}`), "limit", "100000"},
		{"project over-quota weight", "PUT", a1 + "/resources", "application/json", quota(`{"deserved":1,"overQuotaWeight":1001}`), quota(`{"deserved":1,"overQuotaWeight":1000}`), "weight", "1000"},
		{"department deserved", "PUT", deptA, "application/json", `{"resources":` + quota(`{"deserved":100001}`) + `}`, `{"resources":` + quota(`{"deserved":100000}`) + `}`, "deserved", "100000"},
		{"policy form's reclaim minimum runtime", "POST", "/projects/" + w.proj["A2"] + "/policy", "application/x-www-form-urlencoded", "reclaimMinRuntimeSeconds=86401", "reclaimMinRuntimeSeconds=86400", "reclaim", "86400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() string {
				path := tc.path
				if tc.method == "POST" {
					path = "/api/v1/org-unit/projects/" + w.proj["A2"]
				}
				path, _ = strings.CutSuffix(path, "/resources")
				return string(get(t, w.srv, path).body)
			}
			before := read()
			got := do(t, w.srv, tc.method, tc.path, tc.contentType, tc.over)
			if got.status != 400 || !strings.Contains(string(got.body), tc.field) || !strings.Contains(string(got.body), tc.bound) {
				t.Errorf("past the bound = %d, want 400 naming %s and %s: %.400s", got.status, tc.field, tc.bound, got.body)
			}
			if after := read(); !jsonEqual(t, before, after) {
				t.Errorf("a refused value was written:\nbefore %s\nafter  %s", before, after)
			}
			if got := do(t, w.srv, tc.method, tc.path, tc.contentType, tc.within); got.status != 200 {
				t.Errorf("within the bound = %d, want 200: %.400s", got.status, got.body)
			}
		})
	}
	t.Run("a project created past a bound", func(t *testing.T) {
		got := do(t, w.srv, "POST", "/api/v1/org-unit/projects", "application/json",
			`{"name":"created-past-bound","departmentId":"`+w.dept["A"]+`","policy":{"reclaimMinRuntimeSeconds":86401}}`)
		if got.status != 400 || !strings.Contains(string(got.body), "reclaimMinRuntimeSeconds") || !strings.Contains(string(got.body), "86400") {
			t.Errorf("creating past the bound = %d, want 400 naming reclaimMinRuntimeSeconds and 86400: %.300s", got.status, got.body)
		}
		for _, p := range decodeList[views.Project](t, get(t, w.srv, "/api/v1/org-unit/projects?limit=100").body, "projects").Items {
			if p.Name == "created-past-bound" {
				t.Errorf("the refused project was created: %+v", p)
			}
		}
	})
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(x, y)
}
