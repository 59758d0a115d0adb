package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// myRuleList is Run:ai's answer to GET /authorization/me/access-rules.
type myRuleList struct {
	AccessRules struct {
		TotalRecords   int                       `json:"totalRecords"`
		DisplayRecords int                       `json:"displayRecords"`
		AccessRules    []views.RunAIMyAccessRule `json:"accessRules"`
	} `json:"accessRules"`
}

// actionsOn are the actions permissions allow on each resource type.
func actionsOn(ps []views.RunAIPermission) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		out[p.ResourceType] = strings.Join(p.Actions, ",")
	}
	return out
}

// TestRunAIRolesAreArbitersRoles: the five roles, by their ids, with Run:ai's fields and the
// permissions Arbiter's authorization table gives each, read alike by every signed-in caller.
func TestRunAIRolesAreArbitersRoles(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	viewer := newAPIKey(t, st, "viewer", "system", "")
	r := doAs(t, srv, viewer, "GET", "/api/v1/authorization/roles", "", "")
	roles := decode[[]views.RunAIRole](t, r.body)
	if r.status != 200 || len(roles) != 5 {
		t.Fatalf("GET roles = %d %s", r.status, r.body)
	}
	var got []string
	for _, role := range roles {
		got = append(got, fmt.Sprintf("%d %s (%s)", role.ID, role.Name, role.ArbiterRole))
		if role.Custom || !role.Enabled || !role.EffectiveEnabled || role.CreatedBy != "system" || role.Description == "" {
			t.Errorf("role %d is not a predefined, enabled role: %+v", role.ID, role)
		}
	}
	want := []string{"1 System administrator (admin)", "2 Department administrator (department-admin)", "3 Research manager (research-manager)",
		"4 Researcher (researcher)", "5 Viewer (viewer)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	viewerRole := decode[views.RunAIRole](t, doAs(t, srv, viewer, "GET", "/api/v1/authorization/roles/5", "", "").body)
	if diff := cmp.Diff(roles[4], viewerRole); diff != "" {
		t.Errorf("role 5 by its id (-listed +read):\n%s", diff)
	}
	for resource, actions := range actionsOn(viewerRole.Permissions) {
		if actions != "read" {
			t.Errorf("a viewer may %s %s, want only read", actions, resource)
		}
	}
	for path, want := range map[string]int{"/api/v1/authorization/roles/9": 404, "/api/v1/authorization/roles/0": 404, "/api/v1/authorization/roles/viewer": 400} {
		r := doAs(t, srv, viewer, "GET", path, "", "")
		if e := r.refusal(t); r.status != want || !strings.Contains(e.Message, "5 (Viewer)") {
			t.Errorf("GET %s = %d %s, want %d naming the roles", path, r.status, r.body, want)
		}
	}
}

// TestRunAIPermissionsAreTheCallersRoles: each role's permissions say what Arbiter lets it do
// (researchers change and delete their own workloads only; Run:ai's permissions cannot say
// "own"), and a caller's are those of its roles.
func TestRunAIPermissionsAreTheCallersRoles(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	for role, want := range map[string]map[string]string{
		"admin": {"department": "create,read,update,delete", "project": "create,read,update,delete", "workloads": "create,read,update,delete",
			"access_rules": "create,read,delete", "service-account": "create,read,delete", "nodepools": "create,read,update,delete", "roles": "read"},
		"department-admin": {"department": "read", "project": "create,read,update,delete", "workloads": "create,read,update,delete", "nodepools": "read", "roles": "read"},
		"research-manager": {"department": "read", "project": "read,update", "workloads": "create,read,update,delete", "nodepools": "read", "roles": "read"},
		"researcher":       {"department": "read", "project": "read", "workloads": "create,read,update,delete", "nodepools": "read", "roles": "read"},
		"viewer":           {"department": "read", "project": "read", "workloads": "read", "nodepools": "read", "roles": "read"},
	} {
		scopeType := "system"
		if role == "department-admin" {
			scopeType = "department"
		}
		scopeID := ""
		if scopeType == "department" {
			scopeID = uuid.NewString()
		}
		token := newAPIKey(t, st, role, scopeType, scopeID)
		got := actionsOn(decode[[]views.RunAIPermission](t, doAs(t, srv, token, "GET", "/api/v1/authorization/permissions", "", "").body))
		for resource, actions := range want {
			if got[resource] != actions {
				t.Errorf("%s may %q on %s, want %q", role, got[resource], resource, actions)
			}
		}
		if _, ok := got["access_rules"]; ok && role != "admin" {
			t.Errorf("%s has permissions on access rules: %s", role, got["access_rules"])
		}
	}
}

// userServer serves the API over w's store with a token key of its own, so that the test can
// sign people in, and returns a token for the user.
func userServer(t *testing.T, st *store.Store) (*httptest.Server, func(u store.User) string) {
	t.Helper()
	key := []byte("a key only this test's server uses to sign tokens")
	d := deps(st)
	d.Login.TokenKey = key
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	return srv, func(u store.User) string {
		return auth.NewAccessTokens(key).Issue(auth.TokenForUser, u.ID, time.Now().Add(time.Hour))
	}
}

// TestMyAccessRulesAreTheCallersOwn: a person's own rules are those naming them (by email) and
// their groups, by number, paged and searched; an API key's is its own binding as an app; the
// bootstrap admin's admin role, which no rule gives, is listed without an id.
func TestMyAccessRulesAreTheCallersOwn(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	ctx := context.Background()
	ada, err := w.st.UpsertOIDCUser(ctx, "https://idp.example", "sub-ada", "ada@example.org", "Ada", []string{"ml-team"}, true)
	if err != nil {
		t.Fatal(err)
	}
	rule := func(subjectType, subject string, role int, scopeType, scopeID string) views.RunAIAccessRule {
		return sendAs[views.RunAIAccessRule](t, w.srv, "POST", "/api/v1/authorization/access-rules",
			fmt.Sprintf(`{"subjectId":%q,"subjectType":%q,"roleId":%d,"scopeId":%q,"scopeType":%q}`, subject, subjectType, role, scopeID, scopeType), 201)
	}
	adasOwn := rule("user", "ADA@example.org", 5, "project", w.proj["A1"])
	teams := rule("group", "ml-team", 4, "department", w.dept["A"])
	rule("user", "bob@example.org", 5, "project", w.proj["B1"])
	rule("group", "other-team", 5, "system", "")

	srv, tokenFor := userServer(t, w.st)
	mine := func(token, query string) myRuleList {
		t.Helper()
		r := doAs(t, srv, token, "GET", "/api/v1/authorization/me/access-rules"+query, "", "")
		if r.status != 200 {
			t.Fatalf("GET me/access-rules%s = %d %s", query, r.status, r.body)
		}
		return decode[myRuleList](t, r.body)
	}
	count := func(token, query string) int {
		t.Helper()
		return decode[struct{ Count int }](t, doAs(t, srv, token, "GET", "/api/v1/authorization/me/access-rules/count"+query, "", "").body).Count
	}
	own := func(r views.RunAIAccessRule) views.RunAIMyAccessRule {
		id := r.ID
		return views.RunAIMyAccessRule{ID: &id, RunAIGrant: r.RunAIGrant}
	}
	adas := mine(tokenFor(ada), "")
	if diff := cmp.Diff([]views.RunAIMyAccessRule{own(adasOwn), own(teams)}, adas.AccessRules.AccessRules); diff != "" || adas.AccessRules.TotalRecords != 2 || adas.AccessRules.DisplayRecords != 2 {
		t.Errorf("Ada's rules (-want +got):\n%s\n%+v", diff, adas.AccessRules)
	}
	if got := mine(tokenFor(ada), "?search=alpha").AccessRules; got.TotalRecords != 1 || len(got.AccessRules) != 1 || *got.AccessRules[0].ID != adasOwn.ID {
		t.Errorf("Ada's rules searched for alpha: %+v", got)
	}
	if got := mine(tokenFor(ada), "?offset=1&limit=1").AccessRules; got.TotalRecords != 2 || got.DisplayRecords != 1 || *got.AccessRules[0].ID != teams.ID {
		t.Errorf("Ada's second rule: %+v", got)
	}
	if n, m := count(tokenFor(ada), ""), count(tokenFor(ada), "?search=dept-a"); n != 2 || m != 1 {
		t.Errorf("Ada counts %d rules, %d searched for dept-a; want 2 and 1", n, m)
	}
	perms := actionsOn(decode[[]views.RunAIPermission](t, doAs(t, srv, tokenFor(ada), "GET", "/api/v1/authorization/permissions", "", "").body))
	if perms["workloads"] != "create,read,update,delete" || perms["project"] != "read" {
		t.Errorf("Ada, a researcher and a viewer, may %v", perms)
	}

	key := newAPIKey(t, w.st, "researcher", "project", w.proj["A1"])
	keys := mine(key, "").AccessRules
	if len(keys.AccessRules) != 1 || keys.TotalRecords != 1 {
		t.Fatalf("an API key's rules: %+v", keys)
	}
	want := views.RunAIMyAccessRule{RunAIGrant: views.RunAIGrant{SubjectID: keys.AccessRules[0].SubjectID, SubjectType: "app", RoleID: 4, RoleName: "Researcher",
		ScopeID: w.proj["A1"], ScopeType: "project", ScopeName: "alpha-one", ClusterID: arbiterCluster, TenantID: 1}}
	if diff := cmp.Diff(want, keys.AccessRules[0]); diff != "" || uuid.Validate(want.SubjectID) != nil {
		t.Errorf("an API key's own binding (-want +got):\n%s", diff)
	}

	withAdmin(t, w.st, "a long enough password")
	admin, err := w.st.LocalUser(ctx, web.BootstrapAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admins := mine(tokenFor(admin), "").AccessRules
	want = views.RunAIMyAccessRule{RunAIGrant: views.RunAIGrant{SubjectID: "admin", SubjectType: "user", RoleID: 1, RoleName: "System administrator",
		ScopeID: "1", ScopeType: "system", ScopeName: "system", ClusterID: arbiterCluster, TenantID: 1}}
	if diff := cmp.Diff([]views.RunAIMyAccessRule{want}, admins.AccessRules); diff != "" {
		t.Errorf("the bootstrap admin's rules (-want +got):\n%s", diff)
	}
}
