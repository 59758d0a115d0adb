package e2e

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/store"
)

// adminPassword is the bootstrap admin's password in every test arbiter on local login.
const adminPassword = "e2e-admin-password"

// adminToken signs in as the bootstrap admin with a plain HTTP client, creates an admin API key
// on the Access page (as a person would) and returns its token; later calls reuse it.
func (a *arbiter) adminToken(t *testing.T) string {
	t.Helper()
	if a.token != "" {
		return a.token
	}
	client := a.signIn(t, "admin", adminPassword)
	page := get(t, client, a.URL+"/access")
	res, err := client.PostForm(a.URL+"/access/keys", url.Values{"_csrf": {csrfOf(t, page)}, "name": {"e2e-admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)},
		"role": {"admin"}, "scopeType": {"system"}, "days": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	m := regexp.MustCompile(`id="new-key-token">([^<]+)<`).FindStringSubmatch(body)
	if res.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("creating an API key answered %d: %.300s", res.StatusCode, body)
	}
	a.token = html.UnescapeString(m[1])
	return a.token
}

// signIn signs in on the local login form and returns a client holding the session cookie.
func (a *arbiter) signIn(t *testing.T, user, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	page := get(t, client, a.URL+"/login")
	res, err := client.PostForm(a.URL+"/login", url.Values{"_csrf": {csrfOf(t, page)}, "username": {user}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	if res.StatusCode != http.StatusOK || res.Request.URL.Path == "/login" {
		t.Fatalf("signing in as %s answered %d at %s: %.300s", user, res.StatusCode, res.Request.URL, body)
	}
	return client
}

func get(t *testing.T, client *http.Client, u string) string {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, res)
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrfOf finds the CSRF token in a page's forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page: %.300s", page)
	}
	return html.UnescapeString(m[1])
}

// loginAsAdmin signs the browser in on the local login form as the bootstrap admin and waits
// for the console's header to show the admin.
func loginAsAdmin(t *testing.T, ctx context.Context, a *arbiter) {
	t.Helper()
	loginAs(t, ctx, a, "admin", adminPassword, "admin")
}

// loginAs signs the browser in on the local login form and checks that the console's header
// shows the role the user has.
func loginAs(t *testing.T, ctx context.Context, a *arbiter, user, password, wantRole string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(a.URL+"/login"),
		chromedp.WaitVisible(`input[name="username"]`),
		chromedp.SendKeys(`input[name="username"]`, user),
		chromedp.SendKeys(`input[name="password"]`, password),
		chromedp.Submit(`input[name="password"]`),
		chromedp.WaitVisible(`header .who .role`),
	)
	if err != nil {
		t.Fatalf("sign in as %s: %v", user, err)
	}
	// Read in one step in the page: the header may be swapped between finding it and reading
	// it (a node id gone stale: "No node with given id found").
	role, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const e = document.querySelector('header .who .role'); return e ? e.textContent : false })()`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil || strings.TrimSpace(role) != wantRole {
		t.Fatalf("after %s signs in the header shows role %q (%v), want %s", user, role, err, wantRole)
	}
}

// localUser creates a local account with a system-wide access rule giving it role.
func (e *env) localUser(t *testing.T, name, password, role string) {
	t.Helper()
	if _, err := e.store.EnsureLocalUser(e.ctx, name, name, true, func() (string, error) { return auth.HashPassword(password) }); err != nil {
		t.Fatal(err)
	}
	_, err := e.store.CreateAccessRule(e.ctx, store.NewAccessRule{SubjectType: "user", Subject: name, Role: role, ScopeType: "system"},
		store.Actor{Subject: "e2e", SubjectType: "system"})
	if err != nil {
		t.Fatal(err)
	}
}
