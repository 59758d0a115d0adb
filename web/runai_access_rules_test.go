package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// runAIRules is Run:ai's list of access rules.
type runAIRules struct {
	TotalRecords   int                     `json:"totalRecords"`
	DisplayRecords int                     `json:"displayRecords"`
	AccessRules    []views.RunAIAccessRule `json:"accessRules"`
}

// arbiterCluster is the installation's one cluster's id (docs/api.md "Conformance").
const arbiterCluster = "94b6171f-7140-5fdd-831e-35e9df1d9f38"

// ruleStamps ignores what a test cannot know in advance: when a rule was made, and its uuid.
var ruleStamps = cmpopts.IgnoreFields(views.RunAIAccessRule{}, "CreatedAt", "UpdatedAt", "RuleUUID")

// TestRunAIAccessRulesAreArbitersAccessRules: a rule made through Run:ai's route is one of
// Arbiter's access rules (listed by /api/v1/access-rules, audited, and applied), numbered,
// named by Run:ai's role ids and names, read back by its number, listed with Run:ai's
// filterBy, sortBy, paging and query parameters, counted, and removed.
func TestRunAIAccessRulesAreArbitersAccessRules(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	before := len(auditRows(t, w.st, "access-rule"))
	made := sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
		`{"subjectId":"ada@example.org","subjectType":"user","roleId":5,"scopeId":"`+w.proj["A1"]+`","scopeType":"project"}`, 201)
	want := views.RunAIAccessRule{ID: made.ID, RunAIGrant: views.RunAIGrant{SubjectID: "ada@example.org", SubjectType: "user", RoleID: 5, RoleName: "Viewer",
		ScopeID: w.proj["A1"], ScopeType: "project", ScopeName: "alpha-one", ClusterID: arbiterCluster, TenantID: 1},
		CreatedBy: made.CreatedBy, Status: views.RunAIAccessRuleStatus{Phase: "Ready"}}
	if diff := cmp.Diff(want, made, ruleStamps); diff != "" || made.ID < 1 || made.CreatedBy == "" || made.CreatedAt.IsZero() || !made.UpdatedAt.Equal(made.CreatedAt) {
		t.Errorf("the rule made (-want +got):\n%s\n%+v", diff, made)
	}
	if rows := auditRows(t, w.st, "access-rule"); len(rows) != before+1 || rows[0].Action != "create" || rows[0].EntityID != made.RuleUUID {
		t.Errorf("audit rows about access rules %d → %d, newest %+v", before, len(rows), rows)
	}
	byID := getAs[views.RunAIAccessRule](t, w.srv, fmt.Sprintf("/api/v1/authorization/access-rules/%d", made.ID))
	if diff := cmp.Diff(made, byID); diff != "" {
		t.Errorf("the rule by its number (-made +read):\n%s", diff)
	}
	arbiters := list[views.AccessRule](t, w.srv, "/api/v1/access-rules", "rules")
	if len(arbiters) != 1 || arbiters[0].ID != made.RuleUUID || arbiters[0].Role != "viewer" || *arbiters[0].ScopeID != w.proj["A1"] {
		t.Errorf("Arbiter's own list of rules is %+v, want the one made as a viewer of alpha-one", arbiters)
	}

	// Tenant and cluster are the system scope (one of each); a group; a department.
	system := sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
		`{"subjectId":"ml-team","subjectType":"group","roleId":4,"scopeId":"1","scopeType":"tenant"}`, 201)
	if system.ScopeType != "system" || system.ScopeID != "1" || system.ScopeName != "system" || system.RoleName != "Researcher" {
		t.Errorf("a tenant rule answers %+v, want the system scope", system)
	}
	sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
		`{"subjectId":"ops","subjectType":"group","roleId":1,"scopeId":"`+arbiterCluster+`","scopeType":"cluster","clusterId":"`+arbiterCluster+`"}`, 201)
	dept := sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
		`{"subjectId":"bob@example.org","subjectType":"user","roleId":2,"scopeId":"`+w.dept["B"]+`","scopeType":"department"}`, 201)
	if dept.ScopeName != "dept-b" || dept.RoleName != "Department administrator" {
		t.Errorf("a department rule answers %+v", dept)
	}

	subjects := func(query string) string {
		t.Helper()
		l := getAs[runAIRules](t, w.srv, "/api/v1/authorization/access-rules"+query)
		var out []string
		for _, r := range l.AccessRules {
			out = append(out, r.SubjectID)
		}
		return fmt.Sprintf("%d/%d %s", l.DisplayRecords, l.TotalRecords, strings.Join(out, ","))
	}
	for query, want := range map[string]string{
		"":                                                 "4/4 ada@example.org,ml-team,ops,bob@example.org",
		"?sortBy=subjectId&sortOrder=desc":                 "4/4 ops,ml-team,bob@example.org,ada@example.org",
		"?sortBy=roleName":                                 "4/4 bob@example.org,ml-team,ops,ada@example.org",
		"?filterBy=roleId==5":                              "1/1 ada@example.org",
		"?filterBy=roleName=@admin":                        "2/2 ops,bob@example.org",
		"?filterBy=scopeType==system":                      "2/2 ml-team,ops",
		"?filterBy=scopeName==alpha-one":                   "1/1 ada@example.org",
		"?filterBy=scopeId==1":                             "2/2 ml-team,ops",
		"?filterBy=phase==Ready,subjectType==group":        "2/2 ml-team,ops",
		"?limit=2&offset=1":                                "2/4 ml-team,ops",
		"?search=EXAMPLE":                                  "2/2 ada@example.org,bob@example.org",
		"?subjectType=group":                               "2/2 ml-team,ops",
		"?subjectIds=ops,bob@example.org":                  "2/2 ops,bob@example.org",
		"?subjectIdFilter=team":                            "1/1 ml-team",
		"?scopeType=department":                            "1/1 bob@example.org",
		"?scopeId=" + w.dept["B"]:                          "1/1 bob@example.org",
		"?roleId=4":                                        "1/1 ml-team",
		"?includeDeleted=true&clusterId=" + arbiterCluster: "4/4 ada@example.org,ml-team,ops,bob@example.org",
		"?lastUpdated=2000-01-01T00:00:00Z":                "4/4 ada@example.org,ml-team,ops,bob@example.org",
		"?lastUpdated=2999-01-01T00:00:00Z":                "0/0 ",
	} {
		if got := subjects(query); got != want {
			t.Errorf("GET access-rules%s = %q, want %q", query, got, want)
		}
	}
	for query, want := range map[string]int{"": 4, "?filterBy=scopeType==system": 2, "?search=example&filterBy=roleId==2": 1} {
		if got := getAs[struct{ Count int }](t, w.srv, "/api/v1/authorization/access-rules/count"+query); got.Count != want {
			t.Errorf("GET access-rules/count%s = %d, want %d", query, got.Count, want)
		}
	}

	before = len(auditRows(t, w.st, "access-rule"))
	send(t, w.srv, "DELETE", fmt.Sprintf("/api/v1/authorization/access-rules/%d", made.ID), "", 204)
	if rows := auditRows(t, w.st, "access-rule"); len(rows) != before+1 || rows[0].Action != "delete" || rows[0].EntityID != made.RuleUUID {
		t.Errorf("audit rows about access rules %d → %d after the delete, newest %+v", before, len(rows), rows)
	}
	for _, method := range []string{"GET", "DELETE"} {
		r := do(t, w.srv, method, fmt.Sprintf("/api/v1/authorization/access-rules/%d", made.ID), "", "")
		if e := r.refusal(t); r.status != 404 || e.Code != 404 || !strings.Contains(e.Message, fmt.Sprint(made.ID)) {
			t.Errorf("%s of the removed rule = %d %s, want a 404 naming it", method, r.status, r.body)
		}
	}
}

// TestRunAIAccessRuleRefusalsNameTheField: a rule Arbiter cannot hold is a 400 that names the
// field and what is valid, and nothing is written.
func TestRunAIAccessRuleRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	a1 := w.proj["A1"]
	for _, tc := range []struct{ body, names string }{
		{`{"subjectType":"user","roleId":5,"scopeId":"` + a1 + `","scopeType":"project"}`, "subjectId"},
		{`{"subjectId":"ada","subjectType":"user","scopeId":"` + a1 + `","scopeType":"project"}`, "roleId"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeType":"project"}`, "scopeId"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"` + a1 + `"}`, "scopeType"},
		{`{"subjectId":"ada","roleId":5,"scopeId":"` + a1 + `","scopeType":"project"}`, "subjectType"},
		{`{"subjectId":"ada","subjectType":"robot","roleId":5,"scopeId":"` + a1 + `","scopeType":"project"}`, "use user or group"},
		{`{"subjectId":"ci","subjectType":"app","roleId":5,"scopeId":"` + a1 + `","scopeType":"project"}`, "/api/v1/api-keys"},
		{`{"subjectId":"ci","subjectType":"service-account","roleId":5,"scopeId":"` + a1 + `","scopeType":"project"}`, "/api/v1/api-keys"},
		{`{"subjectId":"ada","subjectType":"user","roleId":6,"scopeId":"` + a1 + `","scopeType":"project"}`, "5 (Viewer)"},
		{`{"subjectId":"ada","subjectType":"user","roleId":1,"scopeId":"` + a1 + `","scopeType":"project"}`, "system"},
		{`{"subjectId":"ada","subjectType":"user","roleId":2,"scopeId":"` + a1 + `","scopeType":"project"}`, "department"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"1001","scopeType":"tenant"}`, `tenant, "1"`},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"00000000-0000-4000-8000-000000000001","scopeType":"cluster"}`, arbiterCluster},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"x","scopeType":"system"}`, `"1"`},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"` + a1 + `","scopeType":"nodepool"}`, "system, tenant, cluster, department or project"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"` + w.dept["A"] + `","scopeType":"project"}`, "no project"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"not-a-uuid","scopeType":"department"}`, "UUID"},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"` + a1 + `","scopeType":"project","clusterId":"00000000-0000-4000-8000-000000000001"}`, arbiterCluster},
		{`{"subjectId":"ada","subjectType":"user","roleId":5,"scopeId":"` + a1 + `","scopeType":"project","role":"viewer"}`, `unknown field "role"`},
		{`{"subjectId":"ada","subjectType":"user","roleId":"5","scopeId":"` + a1 + `","scopeType":"project"}`, "roleId"},
	} {
		r := do(t, w.srv, "POST", "/api/v1/authorization/access-rules", "application/json", tc.body)
		if e := r.refusal(t); r.status != 400 || !strings.Contains(e.Message, tc.names) {
			t.Errorf("POST %s = %d %s, want a 400 naming %s", tc.body, r.status, r.body, tc.names)
		}
	}
	if rules := list[views.AccessRule](t, w.srv, "/api/v1/access-rules", "rules"); len(rules) != 0 {
		t.Errorf("refused rules were written: %+v", rules)
	}
	for query, names := range map[string]string{
		"?filterBy=subject==ada": "subjectId", "?sortBy=role": "roleName", "?roleId=x": "roleId", "?roleId=0": "roleId",
		"?lastUpdated=yesterday": "lastUpdated", "?clusterId=00000000-0000-4000-8000-000000000001": arbiterCluster,
		"?includeDeleted=maybe": "includeDeleted", "?limit=501": "limit",
	} {
		r := do(t, w.srv, "GET", "/api/v1/authorization/access-rules"+query, "", "")
		if e := r.refusal(t); r.status != 400 || !strings.Contains(e.Message, names) {
			t.Errorf("GET access-rules%s = %d %s, want a 400 naming %s", query, r.status, r.body, names)
		}
	}
	for _, id := range []string{"x", "-1", "99999999999"} {
		if r := do(t, w.srv, "GET", "/api/v1/authorization/access-rules/"+id, "", ""); r.status != 400 {
			t.Errorf("GET access-rules/%s = %d %s, want 400", id, r.status, r.body)
		}
	}
}
