package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
)

// TestNamespaceClaimsAreRefused: a department admin may not claim a Kubernetes system
// namespace, Arbiter's own namespace, or more namespaces than the bound, through the API or
// the console's forms; and a namespace another project owns is named with that project only
// to a caller who may read it.
func TestNamespaceClaimsAreRefused(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	rules := store.DefaultNamespaceRules()
	rules.Own = "arbiter-system"
	w.st.SetNamespaceRules(rules)
	admin := tokenOf(w.srv)
	for p, ns := range map[string]string{"A2": "team-a", "B1": "team-b"} {
		if r := doAs(t, w.srv, admin, "PUT", "/api/v1/org-unit/projects/"+w.proj[p], "application/json", `{"namespaces":["`+ns+`"]}`); r.status != 200 {
			t.Fatalf("admin PUT namespaces of %s = %d: %s", p, r.status, r.body)
		}
	}
	deptAdmin := newAPIKey(t, w.st, "department-admin", "department", w.dept["A"])
	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("ns-%d", i)
	}
	manyJSON := `["` + strings.Join(many, `","`) + `"]`
	a1 := "/api/v1/org-unit/projects/" + w.proj["A1"]
	form := func(v url.Values) string { return v.Encode() }
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		says, neverSays                       string
	}{
		{"API: kube-system", "PUT", a1, "application/json", `{"namespaces":["team-x","kube-system"]}`, 400,
			"namespace kube-system is a Kubernetes system namespace; a project may not claim it", ""},
		{"API: default on create", "POST", "/api/v1/org-unit/projects", "application/json", `{"name":"new-a","departmentId":"` + w.dept["A"] + `","namespaces":["default"]}`, 400,
			"namespace default is a Kubernetes system namespace", ""},
		{"API: Arbiter's own", "PUT", a1, "application/json", `{"namespaces":["arbiter-system"]}`, 400,
			"namespace arbiter-system is Arbiter's own namespace; a project may not claim it", ""},
		{"API: too many", "PUT", a1, "application/json", `{"namespaces":` + manyJSON + `}`, 400,
			"a project has at most 20 namespaces; this asks for 21", ""},
		{"API: taken by a project the caller reads", "PUT", a1, "application/json", `{"namespaces":["team-a"]}`, 409,
			"namespace team-a already belongs to project alpha-two", ""},
		{"API: taken by a project the caller may not read", "PUT", a1, "application/json", `{"namespaces":["team-b"]}`, 409,
			"namespace team-b already belongs to another project", "beta-one"},
		{"form: kube-public on create", "POST", "/projects", "application/x-www-form-urlencoded",
			form(url.Values{"name": {"new-f"}, "departmentId": {w.dept["A"]}, "namespaces": {"kube-public"}}), 400,
			"namespace kube-public is a Kubernetes system namespace", ""},
		{"form: Arbiter's own in a row", "POST", "/projects/" + w.proj["A1"], "application/x-www-form-urlencoded",
			form(url.Values{"name": {"alpha-one"}, "departmentId": {w.dept["A"]}, "namespaces": {"arbiter-system"}}), 400,
			"namespace arbiter-system is Arbiter&#39;s own namespace", ""},
		{"form: too many", "POST", "/projects", "application/x-www-form-urlencoded",
			form(url.Values{"name": {"new-g"}, "departmentId": {w.dept["A"]}, "namespaces": {strings.Join(many, ",")}}), 400,
			"a project has at most 20 namespaces; this asks for 21", ""},
		{"form: taken, readable", "POST", "/projects/" + w.proj["A1"], "application/x-www-form-urlencoded",
			form(url.Values{"name": {"alpha-one"}, "departmentId": {w.dept["A"]}, "namespaces": {"team-a"}}), 409,
			"namespace team-a already belongs to project alpha-two", ""},
		{"form: taken, not readable", "POST", "/projects", "application/x-www-form-urlencoded",
			form(url.Values{"name": {"new-h"}, "departmentId": {w.dept["A"]}, "namespaces": {"team-b"}}), 409,
			"namespace team-b already belongs to another project", "beta-one"},
	}
	for _, tc := range cases {
		r := doAs(t, w.srv, deptAdmin, tc.method, tc.path, tc.contentType, tc.body)
		body := string(r.body)
		if r.status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %s %s = %d, want %d saying %q: %.400s", tc.name, tc.method, tc.path, r.status, tc.status, tc.says, body)
		}
		if tc.neverSays != "" && strings.Contains(body, tc.neverSays) {
			t.Errorf("%s: the answer names %s, which the caller may not read", tc.name, tc.neverSays)
		}
	}
	// The admin reads every project: the same claim names the owner.
	r := doAs(t, w.srv, admin, "PUT", a1, "application/json", `{"namespaces":["team-b"]}`)
	if r.status != 409 || !strings.Contains(string(r.body), "namespace team-b already belongs to project beta-one") {
		t.Errorf("admin claiming team-b = %d: %s", r.status, r.body)
	}
	// Nothing refused was written; twenty namespaces are fine.
	r = doAs(t, w.srv, deptAdmin, "PUT", a1, "application/json", `{"namespaces":["`+strings.Join(many[:20], `","`)+`"]}`)
	if r.status != 200 {
		t.Errorf("20 namespaces = %d: %s", r.status, r.body)
	}
	// The bound is the operator's to set.
	rules.MaxPerProject = 2
	w.st.SetNamespaceRules(rules)
	r = doAs(t, w.srv, deptAdmin, "PUT", a1, "application/json", `{"namespaces":["x","y","z"]}`)
	if r.status != 400 || !strings.Contains(string(r.body), "a project has at most 2 namespaces; this asks for 3") {
		t.Errorf("3 namespaces over a bound of 2 = %d: %s", r.status, r.body)
	}
}
