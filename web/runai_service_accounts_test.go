package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"
)

// serviceAccount is a service account as Run:ai's ServiceAccount spells it, with Arbiter's
// role binding and expiry beside.
type serviceAccount struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ClientID  string     `json:"clientId"`
	TenantID  string     `json:"tenantId"`
	Enabled   bool       `json:"enabled"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt *time.Time `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
	LastLogin *time.Time `json:"lastLogin"`
	Role      string     `json:"role"`
	ScopeType string     `json:"scopeType"`
	ScopeID   *string    `json:"scopeId"`
	ExpiresAt time.Time  `json:"expiresAt"`
}

// TestOnlyAdminsManageServiceAccounts: every route of /api/v1/service-accounts answers 403 to
// every role but the admin, at every scope, and changes nothing; the admin's calls succeed.
func TestOnlyAdminsManageServiceAccounts(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	existing := sendAs[map[string]any](t, w.srv, "POST", "/api/v1/service-accounts", `{"name":"kept","role":"viewer"}`, 201)["id"].(string)
	for _, rc := range roleCases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			scopeType, scopeID := w.scopeID(rc.scope)
			token := newAPIKey(t, w.st, rc.role, scopeType, scopeID)
			p := w.person(t, "p-"+strings.ReplaceAll(rc.role+"-"+rc.scope, "@", ""), rc.role, rc.scope)
			for _, caller := range []struct{ what, token string }{{"an API key", token}, {"a person", p.token}} {
				want := func(ok int) int {
					if rc.admin {
						return ok
					}
					return 403
				}
				name := fmt.Sprintf("made-by-%s-%s", strings.ReplaceAll(caller.what, " ", "-"), uuid.NewString()[:8])
				for _, x := range []struct {
					method, path, body string
					want               int
				}{
					{"GET", "/api/v1/service-accounts", "", want(200)},
					{"POST", "/api/v1/service-accounts", `{"name":"` + name + `","role":"viewer"}`, want(201)},
					{"GET", "/api/v1/service-accounts/" + existing, "", want(200)},
					{"PATCH", "/api/v1/service-accounts/" + existing, `{"enabled":true}`, want(200)},
					{"POST", "/api/v1/service-accounts/" + uuid.NewString() + "/secret", "", want(404)},
					{"DELETE", "/api/v1/service-accounts/" + uuid.NewString(), "", want(404)},
				} {
					ct := ""
					if x.body != "" {
						ct = "application/json"
					}
					if r := doAs(t, w.srv, caller.token, x.method, x.path, ct, x.body); r.status != x.want {
						t.Errorf("%s: %s %s = %d %.300s, want %d", caller.what, x.method, x.path, r.status, r.body, x.want)
					}
				}
			}
		})
	}
	// The refused calls changed nothing: the kept account is still enabled, and only admins made any.
	accounts := decode[[]serviceAccount](t, get(t, w.srv, "/api/v1/service-accounts").body)
	var made []string
	for _, a := range accounts {
		if strings.HasPrefix(a.Name, "made-by-") {
			made = append(made, a.CreatedBy)
		}
		if a.ID == existing && !a.Enabled {
			t.Errorf("the kept account was disabled by someone: %+v", a)
		}
	}
	if len(made) != 2 {
		t.Errorf("service accounts made by the callers = %v, want the admin key's and the admin person's only", made)
	}
}

// TestServiceAccountLifecycle: an admin makes a service account with a role and a scope, the
// account's client credentials get a token that acts with exactly that binding (a viewer of
// project A1 reads nothing of project B1), disabling it refuses the account and its tokens at
// once and enabling it lets it in again, a regenerated secret replaces the old one at once
// (the old one was just used and so cached), and deleting it ends it; each change is audited.
func TestServiceAccountLifecycle(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	created := sendAs[map[string]any](t, w.srv, "POST", "/api/v1/service-accounts",
		`{"name":"nightly-eval","role":"viewer","scopeType":"project","scopeId":"`+w.proj["A1"]+`"}`, 201)
	id, _ := created["id"].(string)
	secret, _ := created["clientSecret"].(string)
	if created["clientId"] != id || secret == "" || created["name"] != "nightly-eval" {
		t.Fatalf("the created account = %v, want its id as clientId, its name and a secret", created)
	}
	got := decode[serviceAccount](t, get(t, w.srv, "/api/v1/service-accounts/"+id).body)
	want := serviceAccount{ID: id, Name: "nightly-eval", ClientID: id, Enabled: true, Role: "viewer", ScopeType: "project", ScopeID: ptr.To(w.proj["A1"])}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(serviceAccount{}, "TenantID", "CreatedBy", "CreatedAt", "UpdatedAt", "ExpiresAt")); d != "" {
		t.Errorf("GET the account (-want +got):\n%s", d)
	}
	if got.CreatedAt == nil || got.UpdatedAt == nil || got.TenantID == "" || got.CreatedBy == "" {
		t.Errorf("the account lacks Run:ai's createdAt, updatedAt, tenantId or createdBy: %+v", got)
	}

	status, token := clientToken(t, w, id, secret)
	if status != 200 {
		t.Fatalf("the account's client credentials = %d", status)
	}
	viewerA1 := roleCase{role: "viewer", scope: "A1", projects: "A1"}
	w.checkReads(t, viewerA1, func(method, path, body string) response { return doAs(t, w.srv, token, method, path, "", body) })

	// Disabled: refused at once, its tokens too; enabled: in again.
	send(t, w.srv, "PATCH", "/api/v1/service-accounts/"+id, `{"enabled":false}`, 200)
	if r := doAs(t, w.srv, token, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a disabled account's token = %d, want 401", r.status)
	}
	if status, _ := clientToken(t, w, id, secret); status != 401 {
		t.Errorf("a token for a disabled account = %d, want 401", status)
	}
	if a := decode[serviceAccount](t, get(t, w.srv, "/api/v1/service-accounts/"+id).body); a.Enabled {
		t.Errorf("after PATCH enabled false the account = %+v", a)
	}
	send(t, w.srv, "PATCH", "/api/v1/service-accounts/"+id, `{"enabled":true}`, 200)
	status, token = clientToken(t, w, id, secret)
	if status != 200 {
		t.Fatalf("a token for the enabled account = %d", status)
	}

	// Regenerated: the old secret, just used (cached), is refused at once, and so is its token.
	bearer := func(secret string) string { return auth.APIKeyPrefix + strings.ReplaceAll(id, "-", "") + "_" + secret }
	if r := doAs(t, w.srv, bearer(secret), "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Fatalf("the account as a Bearer credential = %d %s", r.status, r.body)
	}
	r := send(t, w.srv, "POST", "/api/v1/service-accounts/"+id+"/secret", "", 200)
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the answer carrying the new secret has Cache-Control %q, want no-store", r.header.Get("Cache-Control"))
	}
	newSecret, _ := jsonBody(t, r)["clientSecret"].(string)
	if newSecret == "" || newSecret == secret {
		t.Fatalf("the regenerated secret = %q", newSecret)
	}
	if r := doAs(t, w.srv, bearer(secret), "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("the old secret right after regeneration = %d, want 401", r.status)
	}
	if r := doAs(t, w.srv, token, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a token issued for the old secret = %d, want 401", r.status)
	}
	if r := doAs(t, w.srv, bearer(newSecret), "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Errorf("the new secret = %d %s", r.status, r.body)
	}

	// Deleted: gone from the list, 404 by id, refused as a credential at once.
	send(t, w.srv, "DELETE", "/api/v1/service-accounts/"+id, "", 204)
	if r := doAs(t, w.srv, bearer(newSecret), "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a deleted account's secret = %d, want 401", r.status)
	}
	if r := do(t, w.srv, "GET", "/api/v1/service-accounts/"+id, "", ""); r.status != 404 {
		t.Errorf("GET a deleted account = %d, want 404", r.status)
	}
	for _, a := range decode[[]serviceAccount](t, get(t, w.srv, "/api/v1/service-accounts").body) {
		if a.ID == id {
			t.Errorf("the deleted account is still listed: %+v", a)
		}
	}
	var actions []string
	for _, e := range auditRows(t, w.st, "api-key") {
		if e.EntityID == id {
			actions = append(actions, e.Action)
		}
	}
	if d := cmp.Diff([]string{"revoke", "regenerate-secret", "update", "update", "create"}, actions); d != "" {
		t.Errorf("the account's audit rows, newest first (-want +got):\n%s", d)
	}
}

// TestServiceAccountRefusals: bad input is a 400 naming the field; an unknown id is a 404.
func TestServiceAccountRefusals(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	for _, x := range []struct{ method, path, body, field string }{
		{"POST", "/api/v1/service-accounts", `{"role":"viewer"}`, "name"},
		{"POST", "/api/v1/service-accounts", `{"name":"no-role"}`, "role"},
		{"POST", "/api/v1/service-accounts", `{"name":"x","role":"boss"}`, "boss"},
		{"POST", "/api/v1/service-accounts", `{"name":"x","role":"viewer","colour":"red"}`, "colour"},
		{"PATCH", "/api/v1/service-accounts/" + uuid.NewString(), `{}`, "enabled"},
		{"PATCH", "/api/v1/service-accounts/" + uuid.NewString(), `{"enabled":"yes"}`, "enabled"},
		{"GET", "/api/v1/service-accounts/not-an-id", "", "not-an-id"},
	} {
		ct := ""
		if x.body != "" {
			ct = "application/json"
		}
		r := do(t, srv, x.method, x.path, ct, x.body)
		if r.status != 400 || !strings.Contains(string(r.body), x.field) {
			t.Errorf("%s %s %s = %d %s, want 400 naming %s", x.method, x.path, x.body, r.status, r.body, x.field)
		}
	}
	for _, method := range []string{"GET", "DELETE"} {
		if r := do(t, srv, method, "/api/v1/service-accounts/"+uuid.NewString(), "", ""); r.status != 404 {
			t.Errorf("%s an unknown account = %d %s, want 404", method, r.status, r.body)
		}
	}
	if r := do(t, srv, "POST", "/api/v1/service-accounts/"+uuid.NewString()+"/secret", "", ""); r.status != 404 {
		t.Errorf("regenerate an unknown account = %d, want 404", r.status)
	}
	send(t, srv, "POST", "/api/v1/service-accounts", `{"name":"twice","role":"viewer"}`, 201)
	if r := do(t, srv, "POST", "/api/v1/service-accounts", "application/json", `{"name":"twice","role":"viewer"}`); r.status != 409 {
		t.Errorf("a second account of the same name = %d %s, want 409", r.status, r.body)
	}
}
