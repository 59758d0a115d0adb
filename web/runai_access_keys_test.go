package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// accessKey is an access key as Run:ai's AccessKey1 spells it, with Arbiter's expiresAt.
type accessKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ClientID  string     `json:"clientId"`
	CreatedAt *time.Time `json:"createdAt"`
	LastLogin *time.Time `json:"lastLogin"`
	ExpiresAt time.Time  `json:"expiresAt"`
}

// newAccessKey is the answer to a create: the key with its secret, shown this once.
type newAccessKey struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	ClientID     string     `json:"clientId"`
	ClientSecret string     `json:"clientSecret"`
	CreatedAt    *time.Time `json:"createdAt"`
	ExpiresAt    time.Time  `json:"expiresAt"`
}

// person is a local account holding one access rule, signed in with its password.
type person struct {
	name, userID, token string
}

// person makes a local account name holding role at scope ("system", "A" or "A1"; role ""
// for none) and trades its password for an access token, as a person's script would.
func (w *orgWorld) person(t *testing.T, name, role, scope string) person {
	t.Helper()
	ctx := context.Background()
	password := "pw-of-" + name
	if _, err := w.st.EnsureLocalUser(ctx, name, name, true, func() (string, error) { return auth.HashPassword(password) }); err != nil {
		t.Fatal(err)
	}
	u, err := w.st.LocalUser(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		scopeType, scopeID := w.scopeID(scope)
		n := store.NewAccessRule{SubjectType: "user", Subject: name, Role: role, ScopeType: scopeType}
		if scopeID != "" {
			id := uuid.MustParse(scopeID)
			n.ScopeID = &id
		}
		if _, err := w.st.CreateAccessRule(ctx, n, store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
			t.Fatal(err)
		}
	}
	r := doAs(t, w.srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded",
		url.Values{"grant_type": {"password"}, "username": {name}, "password": {password}}.Encode())
	if r.status != 200 {
		t.Fatalf("%s's password grant = %d %s", name, r.status, r.body)
	}
	return person{name: name, userID: u.ID.String(), token: jsonBody(t, r)["access_token"].(string)}
}

// clientToken trades client credentials for an access token through /api/v1/token; it
// returns the status and the token.
func clientToken(t *testing.T, w *orgWorld, clientID, secret string) (int, string) {
	t.Helper()
	r := doAs(t, w.srv, "", "POST", "/api/v1/token", "application/json",
		fmt.Sprintf(`{"grantType":"client_credentials","clientId":%q,"clientSecret":%q}`, clientID, secret))
	if r.status != 200 {
		return r.status, ""
	}
	return r.status, jsonBody(t, r)["accessToken"].(string)
}

// makeAccessKey creates an access key named name with the caller's token and returns it.
func makeAccessKey(t *testing.T, w *orgWorld, token, name string) newAccessKey {
	t.Helper()
	r := doAs(t, w.srv, token, "POST", "/api/v1/access-keys", "application/json", `{"name":"`+name+`"}`)
	if r.status != 201 {
		t.Fatalf("POST /api/v1/access-keys %s = %d %s", name, r.status, r.body)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the answer carrying a secret has Cache-Control %q, want no-store", cc)
	}
	return decode[newAccessKey](t, r.body)
}

// TestAccessKeysActWithTheirPersonsRulesAtEachUse: for every role at every scope, a person's
// access key (through the token it is traded for) reads exactly what the person reads, and
// nothing else; the person lists and reads only their own keys, another person's key is
// unknown to them (404), the administration routes are the admin's only, and a key cannot
// make keys.
func TestAccessKeysActWithTheirPersonsRulesAtEachUse(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	other := w.person(t, "other", "viewer", "system")
	othersKey := makeAccessKey(t, w, other.token, "others-key")
	for i, rc := range roleCases {
		t.Run(rc.role+"@"+rc.scope, func(t *testing.T) {
			p := w.person(t, fmt.Sprintf("person-%d", i), rc.role, rc.scope)
			k := makeAccessKey(t, w, p.token, "laptop")
			if k.ClientID != k.ID || k.ClientSecret == "" || k.Name != "laptop" || k.CreatedAt == nil {
				t.Errorf("the new key = %+v, want its id as clientId, a secret, its name and createdAt", k)
			}
			status, keyToken := clientToken(t, w, k.ClientID, k.ClientSecret)
			if status != 200 {
				t.Fatalf("the key's client credentials = %d, want a token", status)
			}
			call := func(method, path, body string) response {
				contentType := "application/json"
				if body == "" {
					contentType = ""
				}
				return doAs(t, w.srv, keyToken, method, path, contentType, body)
			}
			w.checkReads(t, rc, call)
			me := jsonBody(t, call("GET", "/api/v1/me", ""))
			if me["subject"] != p.name || me["subjectType"] != "user" || me["role"] != rc.role {
				t.Errorf("/api/v1/me through the key = %v, want %s, a user, role %s", me, p.name, rc.role)
			}

			// A key cannot make keys, nor regenerate or delete them.
			if r := call("POST", "/api/v1/access-keys", `{"name":"from-a-key"}`); r.status != 403 {
				t.Errorf("a key's token creating an access key = %d %s, want 403", r.status, r.body)
			}
			if r := call("POST", "/api/v1/access-keys/"+k.ID+"/secret", ""); r.status != 403 {
				t.Errorf("a key's token regenerating its own secret = %d %s, want 403", r.status, r.body)
			}

			// Their own keys only.
			mine := doAs(t, w.srv, p.token, "GET", "/api/v1/access-keys", "", "")
			keys := decodeList[accessKey](t, mine.body, "accessKeys").Items
			if len(keys) != 1 || keys[0].ID != k.ID {
				t.Errorf("the person's access keys = %+v, want only %s", keys, k.ID)
			}
			for method, path := range map[string]string{"GET": "/api/v1/access-keys/" + othersKey.ID,
				"DELETE": "/api/v1/access-keys/" + othersKey.ID, "POST": "/api/v1/access-keys/" + othersKey.ID + "/secret"} {
				if r := doAs(t, w.srv, p.token, method, path, "", ""); r.status != 404 {
					t.Errorf("%s another person's key = %d %s, want 404", method, r.status, r.body)
				}
			}
			if r := doAs(t, w.srv, p.token, "GET", "/api/v1/access-keys/"+k.ID, "", ""); r.status != 200 || decode[accessKey](t, r.body).ID != k.ID {
				t.Errorf("GET their own key = %d %s", r.status, r.body)
			}
			admin := 403
			if rc.admin {
				admin = 200
			}
			if r := doAs(t, w.srv, p.token, "GET", "/api/v1/administration/access-keys", "", ""); r.status != admin {
				t.Errorf("GET /api/v1/administration/access-keys = %d, want %d", r.status, admin)
			}
			if rc.admin {
				admin = 404 // the admin may delete anyone's key: this id is no key's
			}
			if r := doAs(t, w.srv, p.token, "DELETE", "/api/v1/administration/access-keys/"+uuid.NewString(), "", ""); r.status != admin {
				t.Errorf("DELETE /api/v1/administration/access-keys/{unknown} = %d, want %d", r.status, admin)
			}
		})
	}
	// Nobody else touched the other person's key.
	if status, _ := clientToken(t, w, othersKey.ClientID, othersKey.ClientSecret); status != 200 {
		t.Errorf("the other person's key after everyone tried it = %d, want still valid", status)
	}
}

// TestAccessKeyFollowsItsPersonsRulesAsTheyChange: a key's token has the rules its person
// holds at each use, not those held when it was made; deleting the person deletes the key.
func TestAccessKeyFollowsItsPersonsRulesAsTheyChange(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	p := w.person(t, "rita", "researcher", "A1")
	k := makeAccessKey(t, w, p.token, "ci")
	_, keyToken := clientToken(t, w, k.ClientID, k.ClientSecret)
	project := "/api/v1/org-unit/projects/" + w.proj["A1"]
	if r := doAs(t, w.srv, keyToken, "GET", project, "", ""); r.status != 200 {
		t.Fatalf("the key reads its person's project = %d %s", r.status, r.body)
	}
	rules, err := w.st.AccessRules(context.Background(), listquery.Query{Limit: listquery.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.Subject == "rita" {
			send(t, w.srv, "DELETE", "/api/v1/access-rules/"+r.ID.String(), "", 204)
		}
	}
	if r := doAs(t, w.srv, keyToken, "GET", project, "", ""); r.status != 404 {
		t.Errorf("once the person lost the rule, the key reads the project = %d, want 404", r.status)
	}
	if r := doAs(t, w.srv, keyToken, "GET", "/api/v1/org-unit/projects", "", ""); len(decodeList[map[string]any](t, r.body, "projects").Items) != 0 {
		t.Errorf("once the person lost the rule, the key lists projects: %s", r.body)
	}

	// The person's account goes (its users row is deleted): their keys go with it, at once.
	if _, err := w.st.Pool().Exec(context.Background(), `DELETE FROM users WHERE id = $1`, p.userID); err != nil {
		t.Fatal(err)
	}
	if r := doAs(t, w.srv, keyToken, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("the key's token once its person is deleted = %d %s, want 401", r.status, r.body)
	}
	if status, _ := clientToken(t, w, k.ClientID, k.ClientSecret); status != 401 {
		t.Errorf("a token for the key of a deleted person = %d, want 401", status)
	}
	left, err := w.st.AccessKeys(context.Background(), store.AccessKeyFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the deleted person's keys are still stored: %+v", left)
	}
}

// TestAccessKeySecretRegenerationAndDeletionTakeEffectAtOnce: the old secret is refused the
// moment a new one is made, even though it was just used (and so is in the key cache), and so
// are the tokens issued for it; a deleted key and its tokens are refused at once; the admin
// lists and deletes anyone's key; each change has its audit row.
func TestAccessKeySecretRegenerationAndDeletionTakeEffectAtOnce(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	p := w.person(t, "rita", "viewer", "A")
	k := makeAccessKey(t, w, p.token, "ci")
	bearer := func(secret string) string {
		return auth.APIKeyPrefix + strings.ReplaceAll(k.ID, "-", "") + "_" + secret
	}
	if r := doAs(t, w.srv, bearer(k.ClientSecret), "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Fatalf("the key as a Bearer credential = %d %s", r.status, r.body)
	}
	_, oldToken := clientToken(t, w, k.ClientID, k.ClientSecret)

	r := doAs(t, w.srv, p.token, "POST", "/api/v1/access-keys/"+k.ID+"/secret", "", "")
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("regenerate = %d %s (Cache-Control %q)", r.status, r.body, r.header.Get("Cache-Control"))
	}
	secret := decode[struct {
		ClientSecret string `json:"clientSecret"`
	}](t, r.body).ClientSecret
	if secret == "" || secret == k.ClientSecret {
		t.Fatalf("the regenerated secret = %q", secret)
	}
	if r := doAs(t, w.srv, bearer(k.ClientSecret), "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("the old secret right after regeneration = %d, want 401", r.status)
	}
	if status, _ := clientToken(t, w, k.ClientID, k.ClientSecret); status != 401 {
		t.Errorf("a token for the old secret = %d, want 401", status)
	}
	if r := doAs(t, w.srv, oldToken, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a token issued for the old secret = %d, want 401", r.status)
	}
	status, newToken := clientToken(t, w, k.ClientID, secret)
	if status != 200 {
		t.Fatalf("a token for the new secret = %d", status)
	}
	if r := doAs(t, w.srv, newToken, "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Errorf("the new secret's token = %d %s", r.status, r.body)
	}

	// The admin sees it, filtered by clientId and by createdBy, and deletes it.
	admin := decodeList[map[string]any](t, get(t, w.srv, "/api/v1/administration/access-keys?clientId="+k.ClientID).body, "accessKeys").Items
	if len(admin) != 1 || admin[0]["createdBy"] != "rita" {
		t.Errorf("the administration list by clientId = %v, want rita's key", admin)
	}
	if l := decodeList[map[string]any](t, get(t, w.srv, "/api/v1/administration/access-keys?createdBy=nobody").body, "accessKeys").Items; len(l) != 0 {
		t.Errorf("the administration list by a createdBy nobody is = %v", l)
	}
	send(t, w.srv, "DELETE", "/api/v1/administration/access-keys/"+k.ID, "", 204)
	if r := doAs(t, w.srv, newToken, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a deleted key's token = %d, want 401", r.status)
	}
	if r := doAs(t, w.srv, bearer(secret), "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a deleted key as Bearer = %d, want 401", r.status)
	}
	if r := doAs(t, w.srv, p.token, "GET", "/api/v1/access-keys/"+k.ID, "", ""); r.status != 404 {
		t.Errorf("GET a deleted key = %d, want 404", r.status)
	}

	var got []string
	for _, e := range auditRows(t, w.st, "access-key") {
		by := e.Subject
		if e.SubjectType == "api-key" {
			by = "the admin's key"
		}
		got = append(got, e.Action+" by "+by)
	}
	if d := cmp.Diff([]string{"delete by the admin's key", "regenerate-secret by rita", "create by rita"}, got); d != "" {
		t.Errorf("access key audit rows, newest first (-want +got):\n%s", d)
	}
}

// TestAccessKeysPerPersonAreBounded: a person holds at most web.MaxAccessKeysPerPerson keys;
// the next is refused naming the bound, and deleting one makes room.
func TestAccessKeysPerPersonAreBounded(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	p := w.person(t, "rita", "viewer", "A")
	var first newAccessKey
	for i := range store.MaxAccessKeysPerPerson {
		k := makeAccessKey(t, w, p.token, fmt.Sprintf("key-%d", i))
		if i == 0 {
			first = k
		}
	}
	r := doAs(t, w.srv, p.token, "POST", "/api/v1/access-keys", "application/json", `{"name":"one-too-many"}`)
	if r.status != 409 || !strings.Contains(string(r.body), fmt.Sprint(store.MaxAccessKeysPerPerson)) {
		t.Errorf("one key too many = %d %s, want 409 naming the bound", r.status, r.body)
	}
	if r := doAs(t, w.srv, p.token, "POST", "/api/v1/access-keys", "application/json", `{"name":"key-1"}`); r.status != 409 {
		t.Errorf("a second key of the same name = %d %s, want 409", r.status, r.body)
	}
	if r := doAs(t, w.srv, p.token, "DELETE", "/api/v1/access-keys/"+first.ID, "", ""); r.status != 204 {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	makeAccessKey(t, w, p.token, "one-more")
}

// TestAccessKeysAreForPeople: a service account (an API key, or its token) has no access keys.
func TestAccessKeysAreForPeople(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	for _, x := range []struct{ method, path, body string }{
		{"GET", "/api/v1/access-keys", ""},
		{"POST", "/api/v1/access-keys", `{"name":"svc"}`},
		{"GET", "/api/v1/access-keys/" + uuid.NewString(), ""},
	} {
		ct := ""
		if x.body != "" {
			ct = "application/json"
		}
		if r := do(t, w.srv, x.method, x.path, ct, x.body); r.status != 403 || !strings.Contains(string(r.body), "person") {
			t.Errorf("%s %s with an API key = %d %s, want 403 saying access keys are a person's", x.method, x.path, r.status, r.body)
		}
	}
}
