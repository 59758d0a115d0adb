package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

func sessionRows(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLoginFormStoresNoSession: anonymous visits of the login page store nothing; the form is
// protected by a signed double-submit cookie instead, which every replica sharing the stored
// key accepts and nothing else passes.
func TestLoginFormStoresNoSession(t *testing.T) {
	t.Parallel()
	srv, _, st := loginServer(t, nil)
	for range 50 {
		loginForm(t, srv)
	}
	if n := sessionRows(t, st); n != 0 {
		t.Fatalf("50 anonymous GET /login stored %d sessions, want 0", n)
	}
	ck, token := loginForm(t, srv)
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/login" {
		t.Errorf("the login form cookie is %+v, want HttpOnly, SameSite=Strict, Path=/login", ck)
	}
	right := func(csrf string) url.Values {
		return url.Values{"_csrf": {csrf}, "username": {"admin"}, "password": {"right"}}
	}
	// A token signed by another key (another server, or made up by an attacker).
	other := httptest.NewServer(web.New(web.Deps{}))
	defer other.Close()
	foreignCk, foreignToken := loginForm(t, other)
	forged := &http.Cookie{Name: "arbiter_login", Value: "forged-token"}
	for _, tc := range []struct {
		name  string
		ck    *http.Cookie
		form  url.Values
		query string
	}{
		{"no cookie", nil, right(token), ""},
		{"no token in the form", ck, right(""), ""},
		{"a token that is not the cookie's", ck, right(foreignToken), ""},
		{"an unsigned cookie and token", forged, right("forged-token"), ""},
		{"another server's cookie and token", foreignCk, right(foreignToken), ""},
		{"the token in the query string", ck, right(""), "?_csrf=" + url.QueryEscape(token)},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/login"+tc.query, strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.ck != nil {
			req.AddCookie(&http.Cookie{Name: tc.ck.Name, Value: tc.ck.Value})
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, res)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "reload the page") {
			t.Errorf("%s: sign-in = %d, want 403 asking to reload: %.200s", tc.name, res.StatusCode, body)
		}
	}
	if n := sessionRows(t, st); n != 0 {
		t.Fatalf("refused sign-ins stored %d sessions", n)
	}
	a := postLogin(t, srv, ck, right(token), nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("sign-in with the cookie and its token = %d: %.300s", a.status, a.body)
	}
	if n := sessionRows(t, st); n != 1 {
		t.Errorf("after signing in %d sessions are stored, want 1", n)
	}

	// Two replicas with the key kept in the database: a form from one posts to the other.
	key, err := st.ServerKey(context.Background(), "login-form")
	if err != nil {
		t.Fatal(err)
	}
	replica := func() *httptest.Server {
		d := deps(st)
		d.Login.FormKey = key
		s := httptest.NewServer(web.New(d))
		t.Cleanup(s.Close)
		return s
	}
	a1, a2 := replica(), replica()
	ck, token = loginForm(t, a1)
	if a := postLogin(t, a2, ck, right(token), nil); a.status != http.StatusSeeOther {
		t.Errorf("a form from one replica posted to the other = %d: %.300s", a.status, a.body)
	}
}

// TestCSRFTokenIsNotReadFromTheQueryString: a signed-in form post with the token only in the
// query string is refused; in the body or the X-CSRF-Token header it passes.
func TestCSRFTokenIsNotReadFromTheQueryString(t *testing.T) {
	t.Parallel()
	srv, _, _ := loginServer(t, nil)
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	if status, _ := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {"admin"}, "password": {"right"}}); status != http.StatusSeeOther {
		t.Fatalf("sign-in = %d", status)
	}
	_, page = b.get("/workload-types")
	token := csrfIn(t, page)
	path := "/workload-types/" + store.SeedID("workload-type", "batch/Job").String()
	form := url.Values{"priorityId": {store.SeedID("priority", "high").String()}, "preemptibility": {"preemptible"}}
	if status, _ := b.post(path+"?_csrf="+url.QueryEscape(token), form); status != http.StatusForbidden {
		t.Errorf("the CSRF token in the query string = %d, want 403", status)
	}
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", token)
	if res, err := b.client.Do(req); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Errorf("the CSRF token in X-CSRF-Token = %v %v, want 303", res.StatusCode, err)
	}
	form.Set("_csrf", token)
	if status, _ := b.post(path, form); status != http.StatusSeeOther {
		t.Errorf("the CSRF token in the form body = %d, want 303", status)
	}
}

// TestNoStoreOnPrivateAnswers: signed-in pages, API answers and above all a new API key's
// secret (JSON and page) carry Cache-Control: no-store; static files may be cached.
func TestNoStoreOnPrivateAnswers(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "right")
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	if status, _ := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {"admin"}, "password": {"right"}}); status != http.StatusSeeOther {
		t.Fatalf("sign-in = %d", status)
	}
	check := func(what string, h http.Header, want bool) {
		t.Helper()
		if got := strings.Contains(h.Get("Cache-Control"), "no-store"); got != want {
			t.Errorf("%s: Cache-Control %q, want no-store %v", what, h.Values("Cache-Control"), want)
		}
	}
	for _, p := range []string{"/login", "/workload-types", "/access", "/api/v1/me"} {
		res, err := b.client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		check("GET "+p, res.Header, true)
	}
	res, err := b.client.Get(srv.URL + "/static/arbiter.css")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	check("a static file", res.Header, false)
	r := do(t, srv, "POST", "/api/v1/api-keys", "application/json", `{"name":"ci","role":"viewer"}`)
	if r.status != 201 {
		t.Fatalf("create key = %d %s", r.status, r.body)
	}
	check("POST /api/v1/api-keys", r.header, true)
	r = do(t, srv, "POST", "/access/keys", "application/x-www-form-urlencoded", url.Values{"name": {"ci2"}, "role": {"viewer"}, "days": {"30"}}.Encode())
	if r.status != 201 || !strings.Contains(string(r.body), `id="new-key-token"`) {
		t.Fatalf("create key form = %d", r.status)
	}
	check("POST /access/keys", r.header, true)
}

// TestAPIKeyFormLifetimeIsBounded: "valid for days" is 1 to 730; anything else is a 400 with
// the sentence on the form, and 730 days is 730 days (the product no longer overflows).
func TestAPIKeyFormLifetimeIsBounded(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	for _, days := range []string{"0", "-1", "731", "213504", "99999999999999999999", "1.5", "ten"} {
		r := do(t, srv, "POST", "/access/keys", "application/x-www-form-urlencoded", url.Values{"name": {"k" + days}, "role": {"viewer"}, "days": {days}}.Encode())
		if r.status != 400 || !strings.Contains(string(r.body), "valid for days must be a whole number from 1 to 730") {
			t.Errorf("days=%s = %d, want 400 with the sentence: %.300s", days, r.status, r.body)
		}
	}
	for _, days := range []int{1, 730} {
		before := time.Now()
		name := "valid-" + strconv.Itoa(days)
		r := do(t, srv, "POST", "/access/keys", "application/x-www-form-urlencoded", url.Values{"name": {name}, "role": {"viewer"}, "days": {strconv.Itoa(days)}}.Encode())
		if r.status != 201 {
			t.Fatalf("days=%d = %d: %.300s", days, r.status, r.body)
		}
		keys, err := st.APIKeys(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, k := range keys {
			if k.Name != name {
				continue
			}
			found = true
			want := before.Add(time.Duration(days) * 24 * time.Hour)
			if d := k.ExpiresAt.Sub(want); d < 0 || d > time.Minute {
				t.Errorf("days=%d: the key expires %v, want %v", days, k.ExpiresAt, want)
			}
		}
		if !found {
			t.Errorf("days=%d: no key %q", days, name)
		}
	}
}
