package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// runAIUser is Run:ai's User2, as GET /api/v1/users answers each user.
type runAIUser struct {
	ID        string     `json:"id"`
	Username  string     `json:"username"`
	CreatedBy string     `json:"createdBy"`
	CreatedAt *time.Time `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
	LastLogin *time.Time `json:"lastLogin"`
	IsLocal   *bool      `json:"isLocal"`
	Groups    []string   `json:"groups"`
}

// createdUser is Run:ai's UserPostResponse.
type createdUser struct {
	ID           string `json:"id"`
	Username     string `json:"username"`
	TempPassword string `json:"tempPassword"`
}

// createUser creates a local user as the admin and returns the answer.
func createUser(t *testing.T, srv *httptest.Server, email string) createdUser {
	t.Helper()
	u := sendAs[createdUser](t, srv, "POST", "/api/v1/users", `{"email":"`+email+`","resetPassword":false,"notify":true}`, 201)
	if u.ID == "" || u.Username != email || len(u.TempPassword) < 16 {
		t.Fatalf("created user %+v: want an id, the email as user name and a temporary password", u)
	}
	return u
}

// passwordToken signs name in through the token route's password grant: the token, or the
// status and body of the refusal.
func passwordToken(t *testing.T, srv *httptest.Server, name, password string) (string, response) {
	t.Helper()
	r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json",
		fmt.Sprintf(`{"grantType":"password","username":%q,"password":%q}`, name, password))
	if r.status != 200 {
		return "", r
	}
	tok, _ := jsonBody(t, r)["accessToken"].(string)
	return tok, r
}

// mustToken is passwordToken that fails the test on a refusal.
func mustToken(t *testing.T, srv *httptest.Server, name, password string) string {
	t.Helper()
	tok, r := passwordToken(t, srv, name, password)
	if tok == "" {
		t.Fatalf("password grant for %s = %d %s", name, r.status, r.body)
	}
	return tok
}

// browserLogin signs name in on /login with a cookie-holding client.
func browserLogin(t *testing.T, srv *httptest.Server, name, password string) *browser {
	t.Helper()
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	if status, body := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {name}, "password": {password}}); status != http.StatusSeeOther {
		t.Fatalf("sign-in of %s on /login = %d: %.300s", name, status, body)
	}
	return b
}

// signedIn says whether the browser's session still opens the API.
func (b *browser) signedIn() bool {
	b.t.Helper()
	status, _ := b.get("/api/v1/me")
	return status == http.StatusOK
}

func usersNamed(us []runAIUser) string {
	return namesOf(us, func(u runAIUser) string { return u.Username })
}

// TestUsersRoutesAreForAdminsOnly: every role but admin, at every scope, and every non-admin
// API key is refused each users route with 403; an admin key and a person holding the admin
// role may use them.
func TestUsersRoutesAreForAdminsOnly(t *testing.T) {
	t.Parallel()
	w := newOrgWorld(t)
	withAdmin(t, w.st, "bootstrap")
	alice := createUser(t, w.srv, "alice@example.com")
	routes := []struct{ method, path, body string }{
		{"GET", "/api/v1/users", ""},
		{"GET", "/api/v1/users/count", ""},
		{"POST", "/api/v1/users", `{"email":"mallory@example.com"}`},
		{"GET", "/api/v1/users/" + alice.ID, ""},
		{"DELETE", "/api/v1/users/" + alice.ID, ""},
		{"POST", "/api/v1/users/" + alice.ID + "/password", ""},
		{"POST", "/api/v1/users/" + alice.ID + "/logout", ""},
	}
	refusedAll := func(who, token string) {
		t.Helper()
		for _, r := range routes {
			res := doAs(t, w.srv, token, r.method, r.path, "application/json", r.body)
			if res.status != http.StatusForbidden {
				t.Errorf("%s: %s %s = %d, want 403: %s", who, r.method, r.path, res.status, res.body)
			}
		}
	}
	for _, rc := range roleCases {
		if rc.admin {
			continue
		}
		scopeType, id := w.scopeID(rc.scope)
		refusedAll(rc.role+" key at "+rc.scope, newAPIKey(t, w.st, rc.role, scopeType, id))
		// The same role held by a person, through an access rule naming the local user.
		send(t, w.srv, "POST", "/api/v1/access-rules", fmt.Sprintf(`{"subjectType":"user","subject":"alice@example.com","role":%q,"scopeType":%q,"scopeId":%q}`,
			rc.role, scopeType, id), 201)
	}
	refusedAll("alice holding every role but admin", mustToken(t, w.srv, alice.Username, alice.TempPassword))
	// A person with no rule at all.
	bob := createUser(t, w.srv, "bob@example.com")
	refusedAll("bob without access", mustToken(t, w.srv, bob.Username, bob.TempPassword))

	if r := do(t, w.srv, "GET", "/api/v1/users", "", ""); r.status != 200 {
		t.Errorf("an admin key listing users = %d: %s", r.status, r.body)
	}
	send(t, w.srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"bob@example.com","role":"admin","scopeType":"system"}`, 201)
	bobAdmin := mustToken(t, w.srv, bob.Username, bob.TempPassword)
	if r := doAs(t, w.srv, bobAdmin, "GET", "/api/v1/users/"+alice.ID, "", ""); r.status != 200 {
		t.Errorf("a person holding admin reading a user = %d: %s", r.status, r.body)
	}
}

// TestBootstrapAdminIsTheFirstUser: the start-up admin is listed, local, by its name.
func TestBootstrapAdminIsTheFirstUser(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	users := decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body)
	if len(users) != 1 || users[0].Username != web.BootstrapAdmin || users[0].IsLocal == nil || !*users[0].IsLocal ||
		users[0].CreatedBy != "system" || users[0].CreatedAt == nil || users[0].Groups == nil {
		t.Fatalf("users = %+v, want the bootstrap admin alone, local, created by the system", users)
	}
	if c := decode[map[string]int](t, get(t, srv, "/api/v1/users/count").body); c["count"] != 1 {
		t.Errorf("count = %v, want 1", c)
	}
}

// TestCreatedUserSignsInAndHasNoAccessUntilARuleGivesIt: a created local user signs in on
// /login and through the password grant with its temporary password, holds nothing, and
// holds what an access rule naming its email gives it.
func TestCreatedUserSignsInAndHasNoAccessUntilARuleGivesIt(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	alice := createUser(t, srv, "alice@example.com")

	got := decode[runAIUser](t, get(t, srv, "/api/v1/users/"+alice.ID).body)
	yes := true
	want := runAIUser{ID: alice.ID, Username: "alice@example.com", IsLocal: &yes, Groups: []string{}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(runAIUser{}, "CreatedBy", "CreatedAt", "UpdatedAt")); diff != "" {
		t.Errorf("GET the created user (-want +got):\n%s", diff)
	}
	if got.CreatedBy == "" || got.CreatedBy == "system" || got.CreatedAt == nil || got.LastLogin != nil {
		t.Errorf("created user %+v: want the creating admin in createdBy, a creation time and no login yet", got)
	}

	tok := mustToken(t, srv, alice.Username, alice.TempPassword)
	me := jsonBody(t, doAs(t, srv, tok, "GET", "/api/v1/me", "", ""))
	if grants, _ := me["grants"].([]any); len(grants) != 0 || me["subject"] != "alice@example.com" {
		t.Fatalf("a new user's /me = %v, want alice with no grants", me)
	}
	if r := doAs(t, srv, tok, "POST", "/api/v1/node-pools", "application/json", `{"name":"p"}`); r.status != 403 {
		t.Errorf("a new user creating a node pool = %d, want 403", r.status)
	}
	b := browserLogin(t, srv, alice.Username, alice.TempPassword)
	if !b.signedIn() {
		t.Fatal("the browser session of the new user does not open the API")
	}
	if u := decode[runAIUser](t, get(t, srv, "/api/v1/users/"+alice.ID).body); u.LastLogin == nil {
		t.Error("lastLogin stays empty after the user signed in")
	}

	send(t, srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"alice@example.com","role":"viewer","scopeType":"system"}`, 201)
	if me := jsonBody(t, doAs(t, srv, tok, "GET", "/api/v1/me", "", "")); me["role"] != "viewer" {
		t.Errorf("after an access rule, alice's role = %v, want viewer", me["role"])
	}
	rows := auditRows(t, st, "user")
	if len(rows) != 1 || rows[0].Action != "create" || rows[0].EntityID != alice.ID || rows[0].EntityName != alice.Username {
		t.Errorf("audit rows of users = %+v, want the one create", rows)
	}
	if strings.Contains(fmt.Sprint(rows[0].Changes), alice.TempPassword) {
		t.Error("the audit row holds the temporary password")
	}
}

// TestOIDCUsersAreListedButGetNoPassword: people who signed in with the identity provider
// are in the list, not local, and cannot be given a password here.
func TestOIDCUsersAreListedButGetNoPassword(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	u, err := st.UpsertOIDCUser(context.Background(), "https://idp.example.com", "sub-123", "carol@example.com", "Carol", []string{"ml"}, true)
	if err != nil {
		t.Fatal(err)
	}
	got := decode[runAIUser](t, get(t, srv, "/api/v1/users/"+u.ID.String()).body)
	if got.Username != "carol@example.com" || got.IsLocal == nil || *got.IsLocal || got.LastLogin == nil || !cmp.Equal(got.Groups, []string{"ml"}) {
		t.Errorf("the OIDC user reads %+v", got)
	}
	r := do(t, srv, "POST", "/api/v1/users/"+u.ID.String()+"/password", "", "")
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "identity provider") {
		t.Errorf("resetting an OIDC user's password = %d %s, want 400 saying the provider keeps it", r.status, r.body)
	}
	if local := decode[[]runAIUser](t, get(t, srv, "/api/v1/users?filterBy=isLocal==false").body); usersNamed(local) != "carol@example.com" {
		t.Errorf("filterBy isLocal==false = %s, want carol", usersNamed(local))
	}
}

// TestCreateUserRefusals: each bad body is a 400 (or 409) naming the field or the conflict.
func TestCreateUserRefusals(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	createUser(t, srv, "alice@example.com")
	for _, tc := range []struct {
		body   string
		status int
		says   string
	}{
		{`{}`, 400, "email"},
		{`{"email":""}`, 400, "email"},
		{`{"email":"not-an-address"}`, 400, "email"},
		{`{"email":"alice@example.com"}`, 409, "alice@example.com"},
		{`{"email":"ALICE@example.com"}`, 409, "alice@example.com"},
		{`{"email":"x@example.com","role":"admin"}`, 400, "role"},
		{`{"email":"x@example.com","resetPassword":"yes"}`, 400, "resetPassword"},
		{`{"email":"` + strings.Repeat("a", 300) + `@example.com"}`, 400, "email"},
	} {
		r := do(t, srv, "POST", "/api/v1/users", "application/json", tc.body)
		if r.status != tc.status || !strings.Contains(r.refusal(t).Message, tc.says) {
			t.Errorf("POST %s = %d %s, want %d naming %s", tc.body, r.status, r.body, tc.status, tc.says)
		}
	}
	if n := len(decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body)); n != 2 {
		t.Errorf("%d users after the refusals, want 2 (nothing half-written)", n)
	}
}

// TestLocalUsersAreBounded: past store.MaxLocalUsers a create is refused with a 409 that says
// the bound.
func TestLocalUsersAreBounded(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	if _, err := st.Pool().Exec(context.Background(), `INSERT INTO users (issuer, subject, email, name)
		SELECT 'local', 'filler' || i || '@example.com', 'filler' || i || '@example.com', '' FROM generate_series(2, $1) i`, store.MaxLocalUsers); err != nil {
		t.Fatal(err)
	}
	r := do(t, srv, "POST", "/api/v1/users", "application/json", `{"email":"one-more@example.com"}`)
	if r.status != 409 || !strings.Contains(r.refusal(t).Message, fmt.Sprint(store.MaxLocalUsers)) {
		t.Errorf("creating local user %d = %d %s, want 409 naming the bound", store.MaxLocalUsers+1, r.status, r.body)
	}
	// The list is paged: at most 500 a page, Run:ai's default and maximum.
	page := decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body)
	if len(page) != 500 {
		t.Errorf("the first page holds %d users, want 500", len(page))
	}
	if r := do(t, srv, "GET", "/api/v1/users?limit=501", "", ""); r.status != 400 {
		t.Errorf("limit=501 = %d, want 400", r.status)
	}
}

// TestUsersListFiltersSortsAndPages with Run:ai's parameters.
func TestUsersListFiltersSortsAndPages(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	for _, e := range []string{"carol@example.com", "alice@example.com", "bob@example.com"} {
		createUser(t, srv, e)
	}
	list := func(query string) string {
		t.Helper()
		r := get(t, srv, "/api/v1/users?"+query)
		if r.status != 200 {
			t.Fatalf("?%s = %d %s", query, r.status, r.body)
		}
		return usersNamed(decode[[]runAIUser](t, r.body))
	}
	for query, want := range map[string]string{
		"sortBy=username":                            "admin,alice@example.com,bob@example.com,carol@example.com",
		"sortBy=username&sortOrder=desc&limit=2":     "carol@example.com,bob@example.com",
		"sortBy=username&offset=1&limit=2":           "alice@example.com,bob@example.com",
		"filterBy=username=@example&sortBy=username": "alice@example.com,bob@example.com,carol@example.com",
		"search=bo":                           "bob@example.com",
		"filterBy=isLocal==true,username=@ol": "carol@example.com",
	} {
		if got := list(query); got != want {
			t.Errorf("?%s = %s, want %s", query, got, want)
		}
	}
	if c := decode[map[string]int](t, get(t, srv, "/api/v1/users/count?filterBy=username=@example").body); c["count"] != 3 {
		t.Errorf("count of the example.com users = %v, want 3", c)
	}
	if r := do(t, srv, "GET", "/api/v1/users?sortBy=password", "", ""); r.status != 400 || !strings.Contains(r.refusal(t).Message, "sortBy") {
		t.Errorf("sortBy=password = %d %s, want 400 naming sortBy", r.status, r.body)
	}
	// Run:ai's deprecated filter is not read: the list is unfiltered.
	if got := list("filter=runai.is_local:false&sortBy=username&limit=1"); got != "admin" {
		t.Errorf("?filter=runai.is_local:false = %s, want the list as without it", got)
	}
	var raw []map[string]json.RawMessage
	_ = json.Unmarshal(get(t, srv, "/api/v1/users?limit=1").body, &raw)
	if len(raw) != 1 {
		t.Errorf("limit=1 answered %d users", len(raw))
	}
}

// TestUnknownAndMalformedUserIDs: 404 for an id no user has, 400 for one that is no id.
func TestUnknownAndMalformedUserIDs(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	for _, m := range []struct{ method, suffix string }{{"GET", ""}, {"DELETE", ""}, {"POST", "/password"}, {"POST", "/logout"}} {
		if r := do(t, srv, m.method, "/api/v1/users/6723b9d7-73d1-5e4c-a494-d8fdeddc541c"+m.suffix, "", ""); r.status != 404 || r.refusal(t).Message == "" {
			t.Errorf("%s unknown user%s = %d %s, want 404", m.method, m.suffix, r.status, r.body)
		}
		if r := do(t, srv, m.method, "/api/v1/users/not-an-id"+m.suffix, "", ""); r.status != 400 {
			t.Errorf("%s malformed user id%s = %d %s, want 400", m.method, m.suffix, r.status, r.body)
		}
	}
}

// TestNoLocalUserIsCreatedWhileAnIdentityProviderSignsPeopleIn: with an OIDC issuer
// configured local sign-in is off, so a create is a 400 that says so and makes nobody.
func TestNoLocalUserIsCreatedWhileAnIdentityProviderSignsPeopleIn(t *testing.T) {
	t.Parallel()
	var issuer *httptest.Server
	issuer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/auth","token_endpoint":"%[1]s/token","jwks_uri":"%[1]s/keys","id_token_signing_alg_values_supported":["RS256"]}`, issuer.URL)
	}))
	t.Cleanup(issuer.Close)
	oidc, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: issuer.URL, ClientID: "arbiter"})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Login.OIDC = oidc
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	r := do(t, srv, "POST", "/api/v1/users", "application/json", `{"email":"ada@example.com"}`)
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "identity provider") {
		t.Errorf("creating a local user under OIDC = %d %s, want 400 saying people sign in with the identity provider", r.status, r.body)
	}
	if users := decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body); len(users) != 0 {
		t.Errorf("users after the refusal: %s", usersNamed(users))
	}
}
