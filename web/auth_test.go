package web_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/uuid"
)

// TestEveryMutatingRouteNeedsCredentialsAndRole walks the router: every mutating API route
// answers 401 without credentials and 403 to a viewer, both in the error envelope, and each
// refusal is on the audit log (each is the first of its kind: method, route and reason).
func TestEveryMutatingRouteNeedsCredentialsAndRole(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	viewer := newAPIKey(t, st, "viewer", "system", "")
	param := regexp.MustCompile(`:[A-Za-z]+`)
	n := 0
	for _, r := range web.New(web.Deps{}).Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") && !strings.HasPrefix(r.Path, "/api/v2/") || r.Method == "GET" || r.Method == "HEAD" || r.Method == "OPTIONS" || r.Method == "echo_route_not_found" {
			continue
		}
		if r.Path == "/api/v1/token" || r.Path == "/api/v2/token" || r.Path == "/api/v1/token/revoke" { // take their credentials in the body (tokens_test.go, tokens_refresh_test.go)
			continue
		}
		n++
		path := param.ReplaceAllString(r.Path, uuid.NewString())
		for _, tc := range []struct {
			token string
			want  int
		}{{"", 401}, {viewer, 403}} {
			res := doAs(t, srv, tc.token, r.Method, path, "application/json", `{}`)
			if res.status != tc.want {
				t.Errorf("%s %s (credentials %v) = %d, want %d: %s", r.Method, r.Path, tc.token != "", res.status, tc.want, res.body)
				continue
			}
			if e := res.refusal(t); e.Code != tc.want || e.Message == "" {
				t.Errorf("%s %s: not the error envelope: %s", r.Method, r.Path, res.body)
			}
		}
	}
	if n < 6 {
		t.Fatalf("only %d mutating routes found", n)
	}
	denied := 0
	all, _ := st.AuditEntries(context.Background(), 1000)
	for _, e := range all {
		if e.Result == "denied" {
			denied++
		}
	}
	if denied != 2*n {
		t.Errorf("%d denied audit rows for %d refused requests", denied, 2*n)
	}
}

// TestAdminChangesAreAuditedOnce: the right role succeeds and leaves exactly one audit row
// with the change, for each mutating route of this package.
func TestAdminChangesAreAuditedOnce(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	ctx := context.Background()
	cases := []struct {
		method, path, body, entityType string
		want                           int
	}{
		{"PUT", "/api/v1/workload-categories/" + store.SeedID("category", "Train").String(), `{"defaultPreemptibility":"non-preemptible"}`, "workload-category", 200},
		{"PUT", "/api/v1/workload-types/" + store.SeedID("workload-type", "batch/Job").String(), `{"preemptibility":"non-preemptible"}`, "workload-type", 200},
		{"POST", "/api/v1/access-rules", `{"subjectType":"group","subject":"ml-team","role":"viewer","scopeType":"system"}`, "access-rule", 201},
		{"POST", "/api/v1/api-keys", `{"name":"ci","role":"viewer"}`, "api-key", 201},
	}
	for _, tc := range cases {
		before := len(auditRows(t, st, tc.entityType))
		r := do(t, srv, tc.method, tc.path, "application/json", tc.body)
		if r.status != tc.want {
			t.Fatalf("%s %s = %d: %s", tc.method, tc.path, r.status, r.body)
		}
		rows := auditRows(t, st, tc.entityType)
		if len(rows) != before+1 || rows[0].Result != "success" || len(rows[0].Changes) == 0 || rows[0].SubjectType != "api-key" {
			t.Errorf("%s %s: audit rows %d → %d, newest %+v", tc.method, tc.path, before, len(rows), rows[0])
		}
		if tc.entityType == "access-rule" || tc.entityType == "api-key" {
			id := idOf(t, r.body)
			path := map[string]string{"access-rule": "/api/v1/access-rules/", "api-key": "/api/v1/api-keys/"}[tc.entityType] + id
			if r := do(t, srv, "DELETE", path, "", ""); r.status != 204 {
				t.Errorf("DELETE %s = %d %s", path, r.status, r.body)
			}
			if rows := auditRows(t, st, tc.entityType); len(rows) != before+2 || rows[0].Result != "success" {
				t.Errorf("DELETE %s: audit rows %d", path, len(rows))
			}
		}
	}
	_ = ctx
}

// TestAPIKeys: a revoked or expired key is refused with 401; the token is shown once and
// stored only hashed.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	r := do(t, srv, "POST", "/api/v1/api-keys", "application/json", `{"name":"robot","role":"viewer"}`)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	key := decode[views.APIKey](t, r.body)
	token := key.Token
	if token == "" {
		t.Fatalf("the new key's answer has no token: %s", r.body)
	}
	if res := doAs(t, srv, token, "GET", "/api/v1/workload-types", "", ""); res.status != 200 {
		t.Fatalf("the new key is refused: %d %s", res.status, res.body)
	}
	for _, k := range list[views.APIKey](t, srv, "/api/v1/api-keys", "keys") {
		if k.Token != "" {
			t.Errorf("the list shows a token: %+v", k)
		}
	}
	if r := do(t, srv, "DELETE", "/api/v1/api-keys/"+key.ID, "", ""); r.status != 204 {
		t.Fatalf("revoke = %d", r.status)
	}
	if res := doAs(t, srv, token, "GET", "/api/v1/workload-types", "", ""); res.status != 401 || res.refusal(t).Code != 401 {
		t.Errorf("a revoked key answered %d %s", res.status, res.body)
	}
	// An expired key.
	id := uuid.New()
	expiredToken, hash := auth.NewAPIKey(id)
	if _, err := st.Pool().Exec(context.Background(), `INSERT INTO api_keys (id, name, secret_hash, role, scope_type, expires_at, created_by)
		VALUES ($1, 'old', $2, 'admin', 'system', now() - interval '1 minute', 'test')`, id, hash); err != nil {
		t.Fatal(err)
	}
	if res := doAs(t, srv, expiredToken, "GET", "/api/v1/workload-types", "", ""); res.status != 401 {
		t.Errorf("an expired key answered %d", res.status)
	}
	if res := doAs(t, srv, "arb_nonsense", "GET", "/api/v1/workload-types", "", ""); res.status != 401 {
		t.Errorf("a malformed key answered %d", res.status)
	}
}

// browser is a cookie-holding client of a test server.
type browser struct {
	t      *testing.T
	srv    *httptest.Server
	client *http.Client
}

func newBrowserClient(t *testing.T, srv *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, srv: srv, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	res, err := b.client.Get(b.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	res, err := b.client.PostForm(b.srv.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (b *browser) session() string {
	u, _ := url.Parse(b.srv.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "arbiter_session" {
			return c.Value
		}
	}
	return ""
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func csrfIn(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in %.300s", page)
	}
	return html.UnescapeString(m[1])
}

func withAdmin(t *testing.T, st *store.Store, password string) {
	t.Helper()
	if _, err := st.EnsureLocalUser(context.Background(), web.BootstrapAdmin, "Administrator", true,
		func() (string, error) { return auth.HashPassword(password) }); err != nil {
		t.Fatal(err)
	}
}

// TestLocalLoginSessionAndCSRF: a session starts only at login; a form without the CSRF token
// is refused with 403; after logout the old cookie is refused; login and logout are audited.
func TestLocalLoginSessionAndCSRF(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "correct horse")
	b := newBrowserClient(t, srv)
	if status, _ := b.get("/workload-types"); status != http.StatusFound {
		t.Fatalf("an anonymous page view = %d, want a redirect to /login", status)
	}
	_, page := b.get("/login")
	before := b.session()
	if before != "" {
		t.Fatal("the login page set a session cookie; its CSRF token is a signed cookie, not a session")
	}
	if status, _ := b.post("/login", url.Values{"username": {"admin"}, "password": {"correct horse"}}); status != 403 {
		t.Errorf("login without the CSRF token = %d, want 403", status)
	}
	status, _ := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {"admin"}, "password": {"correct horse"}})
	if status != http.StatusSeeOther {
		t.Fatalf("login = %d", status)
	}
	after := b.session()
	if after == "" {
		t.Fatal("login set no session cookie")
	}
	status, page = b.get("/workload-types")
	if status != 200 || !strings.Contains(page, `class="role badge">admin<`) || !strings.Contains(page, `action="/logout"`) {
		t.Fatalf("signed-in page = %d without the admin in the header", status)
	}
	job := store.SeedID("workload-type", "batch/Job").String()
	form := url.Values{"priorityId": {store.SeedID("priority", "high").String()}, "preemptibility": {"preemptible"}}
	if status, _ := b.post("/workload-types/"+job, form); status != 403 {
		t.Errorf("a form POST without the CSRF token = %d, want 403", status)
	}
	form.Set("_csrf", csrfIn(t, page))
	if status, body := b.post("/workload-types/"+job, form); status != http.StatusSeeOther {
		t.Errorf("a form POST with the CSRF token = %d: %.300s", status, body)
	}
	// A JSON call riding on the session cookie needs the token too.
	req, _ := http.NewRequest("PUT", srv.URL+"/api/v1/workload-types/"+job, strings.NewReader(`{"preemptibility":"preemptible"}`))
	req.Header.Set("Content-Type", "application/json")
	if res, _ := b.client.Do(req); res.StatusCode != 403 {
		t.Errorf("a session-authenticated JSON PUT without X-CSRF-Token = %d, want 403", res.StatusCode)
	}
	if status, _ := b.post("/logout", url.Values{"_csrf": {csrfIn(t, page)}}); status != http.StatusSeeOther {
		t.Fatalf("logout = %d", status)
	}
	// The old cookie is refused after logout.
	old := newBrowserClient(t, srv)
	u, _ := url.Parse(srv.URL)
	old.client.Jar.SetCookies(u, []*http.Cookie{{Name: "arbiter_session", Value: after, Path: "/"}})
	if status, _ := old.get("/workload-types"); status != http.StatusFound {
		t.Errorf("the old session cookie still opens pages after logout: %d", status)
	}
	req, _ = http.NewRequest("GET", srv.URL+"/api/v1/workload-types", nil)
	req.AddCookie(&http.Cookie{Name: "arbiter_session", Value: after})
	if res, _ := http.DefaultClient.Do(req); res.StatusCode != 401 {
		t.Errorf("the old session cookie on the API = %d, want 401", res.StatusCode)
	}
	var logins, logouts int
	for _, e := range auditRows(t, st, "session") {
		switch {
		case e.Action == "login" && e.Result == "success" && e.Subject == "admin":
			logins++
		case e.Action == "logout" && e.Result == "success":
			logouts++
		}
	}
	if logins != 1 || logouts != 1 {
		t.Errorf("audit has %d logins and %d logouts, want 1 and 1", logins, logouts)
	}
}

// TestWrongPasswordsAreSlowedDown: after three wrong passwords the account waits (429 with
// Retry-After), even for the right password.
func TestWrongPasswordsAreSlowedDown(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "right")
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	token := csrfIn(t, page)
	for i := range 3 {
		if status, body := b.post("/login", url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"wrong"}}); status != 401 || !strings.Contains(body, "not right") {
			t.Fatalf("wrong password %d = %d", i+1, status)
		}
	}
	status, body := b.post("/login", url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"right"}})
	if status != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins") {
		t.Fatalf("after three failures the next attempt = %d, want 429", status)
	}
	// An attempt while the block lasts is refused without being counted, so trying the right
	// password again is how to see the block end.
	poll.UntilNil(t, "the block ends and the right password signs in", 10*time.Second, func() error {
		if status, _ := b.post("/login", url.Values{"_csrf": {token}, "username": {"admin"}, "password": {"right"}}); status != http.StatusSeeOther {
			return fmt.Errorf("the right password = %d", status)
		}
		return nil
	})
}

// TestAuditLogAPI: paged, filtered, start/end; non-admins see only their own rows.
func TestAuditLogAPI(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	job := "/api/v1/workload-types/" + store.SeedID("workload-type", "batch/Job").String()
	for _, p := range []string{"preemptible", "non-preemptible", "sometimes"} {
		do(t, srv, "PUT", job, "application/json", `{"preemptibility":"`+p+`"}`)
	}
	got := getList[views.AuditEntry](t, srv, "/api/v1/audit/log?filterBy=entityType==workload-type,result==success&limit=1", "entries")
	if len(got.Items) != 1 || got.Items[0].Changes == nil || got.Next == nil || *got.Next != 1 {
		t.Fatalf("first page = %+v", got)
	}
	got = getList[views.AuditEntry](t, srv, "/api/v1/audit/log?filterBy=entityType==workload-type&limit=1&offset=2", "entries")
	if len(got.Items) != 1 || got.Items[0].Result != "success" || got.Next != nil {
		t.Errorf("last page = %+v (newest first: the oldest row is the first change)", got)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if e := list[views.AuditEntry](t, srv, "/api/v1/audit/log?start="+future, "entries"); len(e) != 0 {
		t.Errorf("start in the future gave %d rows", len(e))
	}
	if r := do(t, srv, "GET", "/api/v1/audit/log?start=yesterday", "", ""); r.status != 400 {
		t.Errorf("a bad start = %d", r.status)
	}
	if r := do(t, srv, "GET", "/api/v1/audit/log?filterBy=colour==red", "", ""); r.status != 400 {
		t.Errorf("an unknown filter field = %d", r.status)
	}
	researcher := newAPIKey(t, st, "researcher", "project", uuid.NewString())
	r := doAs(t, srv, researcher, "GET", "/api/v1/audit/log", "", "")
	if r.status != 200 || len(decodeList[views.AuditEntry](t, r.body, "entries").Items) != 0 {
		t.Errorf("a researcher sees others' rows: %d %s", r.status, r.body)
	}
	if r := doAs(t, srv, researcher, "GET", "/event-history", "", ""); r.status != 200 || !strings.Contains(string(r.body), "You see your own actions") {
		t.Errorf("event history for a researcher = %d", r.status)
	}
	if r := do(t, srv, "GET", "/event-history?entityType=workload-type", "", ""); r.status != 200 || strings.Count(string(r.body), `class="audit-row"`) != 3 {
		t.Errorf("event history page = %d with %d rows", r.status, strings.Count(string(r.body), `class="audit-row"`))
	}
}
