package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/web"
)

// TestResetPasswordReplacesTheOldOneAndEndsSessions: the answer's temporary password signs
// in; the old one no longer does, and the sessions and tokens of before end.
func TestResetPasswordReplacesTheOldOneAndEndsSessions(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	alice := createUser(t, srv, "alice@example.com")
	oldToken := mustToken(t, srv, alice.Username, alice.TempPassword)
	b := browserLogin(t, srv, alice.Username, alice.TempPassword)

	reset := decode[map[string]string](t, send(t, srv, "POST", "/api/v1/users/"+alice.ID+"/password", "", 200).body)
	fresh := reset["tempPassword"]
	if len(fresh) < 16 || fresh == alice.TempPassword {
		t.Fatalf("reset answered %v: want a new temporary password", reset)
	}
	if _, r := passwordToken(t, srv, alice.Username, alice.TempPassword); r.status != 401 {
		t.Errorf("the old password after a reset = %d, want 401: %s", r.status, r.body)
	}
	if r := doAs(t, srv, oldToken, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("a token of before the reset = %d, want 401", r.status)
	}
	if b.signedIn() {
		t.Error("a browser session of before the reset still opens the API")
	}
	newToken := mustToken(t, srv, alice.Username, fresh)
	if r := doAs(t, srv, newToken, "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Errorf("a token got with the new password = %d, want 200: %s", r.status, r.body)
	}
	if !browserLogin(t, srv, alice.Username, fresh).signedIn() {
		t.Error("signing in on /login with the new password gives no working session")
	}
	rows := auditRows(t, st, "user")
	if len(rows) != 2 || rows[0].Action != "reset-password" || strings.Contains(fmt.Sprint(rows[0].Changes), fresh) {
		t.Errorf("audit rows %+v: want the reset, newest first, without the password", rows)
	}
}

// TestLogoutEndsTheUsersSessionsAndTokens: after POST /users/{id}/logout the user's browser
// sessions and access tokens are refused; signing in again works; other users stay signed in.
func TestLogoutEndsTheUsersSessionsAndTokens(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	alice := createUser(t, srv, "alice@example.com")
	bob := createUser(t, srv, "bob@example.com")
	aliceToken := mustToken(t, srv, alice.Username, alice.TempPassword)
	aliceBrowser := browserLogin(t, srv, alice.Username, alice.TempPassword)
	bobBrowser := browserLogin(t, srv, bob.Username, bob.TempPassword)

	send(t, srv, "POST", "/api/v1/users/"+alice.ID+"/logout", "", 200)
	if aliceBrowser.signedIn() {
		t.Error("alice's browser session survived her logout")
	}
	if r := doAs(t, srv, aliceToken, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("alice's access token after her logout = %d, want 401", r.status)
	}
	if !bobBrowser.signedIn() {
		t.Error("bob's session ended with alice's logout")
	}
	if !browserLogin(t, srv, alice.Username, alice.TempPassword).signedIn() {
		t.Error("alice cannot sign in again after the logout")
	}
	again := mustToken(t, srv, alice.Username, alice.TempPassword)
	if r := doAs(t, srv, again, "GET", "/api/v1/me", "", ""); r.status != 200 {
		t.Errorf("a token got after the logout = %d, want 200: %s", r.status, r.body)
	}
	if rows := auditRows(t, st, "user"); rows[0].Action != "logout" || rows[0].EntityID != alice.ID {
		t.Errorf("newest user audit row %+v, want alice's logout", rows[0])
	}
}

// TestDeletingAUserEndsItsSessionsAndItsRules: the user is gone (404), its sessions and
// tokens are refused, its access rules as a user subject are removed, and others' stay.
func TestDeletingAUserEndsItsSessionsAndItsRules(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	alice := createUser(t, srv, "alice@example.com")
	send(t, srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"Alice@example.com","role":"viewer","scopeType":"system"}`, 201)
	send(t, srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"bob@example.com","role":"viewer","scopeType":"system"}`, 201)
	tok := mustToken(t, srv, alice.Username, alice.TempPassword)
	b := browserLogin(t, srv, alice.Username, alice.TempPassword)

	send(t, srv, "DELETE", "/api/v1/users/"+alice.ID, "", 204)
	if r := do(t, srv, "GET", "/api/v1/users/"+alice.ID, "", ""); r.status != 404 {
		t.Errorf("GET a deleted user = %d, want 404", r.status)
	}
	if r := do(t, srv, "DELETE", "/api/v1/users/"+alice.ID, "", ""); r.status != 404 || r.refusal(t).Message == "" {
		t.Errorf("deleting it again = %d %s, want 404 with a sentence", r.status, r.body)
	}
	if b.signedIn() {
		t.Error("the deleted user's browser session still opens the API")
	}
	if r := doAs(t, srv, tok, "GET", "/api/v1/me", "", ""); r.status != 401 {
		t.Errorf("the deleted user's token = %d, want 401", r.status)
	}
	if _, r := passwordToken(t, srv, alice.Username, alice.TempPassword); r.status != 401 {
		t.Errorf("the deleted user's password = %d, want 401", r.status)
	}
	rules := decode[map[string][]map[string]any](t, get(t, srv, "/api/v1/access-rules").body)["rules"]
	if len(rules) != 1 || rules[0]["subject"] != "bob@example.com" {
		t.Errorf("access rules after the delete = %v, want bob's alone", rules)
	}
	// Newest first: the refused second delete, then the delete.
	if rows := auditRows(t, st, "user"); len(rows) != 3 || rows[1].Action != "delete" || rows[1].Result != "success" ||
		rows[1].EntityName != alice.Username || rows[1].Changes["accessRulesRemoved"] != float64(1) || rows[0].Result != "failure" {
		t.Errorf("user audit rows %+v, want the create, alice's delete removing one rule, and the refused second delete", rows)
	}
}

// TestTheLastLocalAdminCannotBeDeleted: deleting the only local admin who can sign in is a
// 400 (the status Run:ai's delete_user_by_id has for a refusal) that says what to do; once another local user holds admin, it may go, and then that
// one is the last.
func TestTheLastLocalAdminCannotBeDeleted(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "bootstrap")
	adminID := ""
	for _, u := range decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body) {
		if u.Username == web.BootstrapAdmin {
			adminID = u.ID
		}
	}
	r := do(t, srv, "DELETE", "/api/v1/users/"+adminID, "", "")
	if r.status != 400 || !strings.Contains(r.refusal(t).Message, "last local admin") {
		t.Fatalf("deleting the only local admin = %d %s, want 400 saying it is the last", r.status, r.body)
	}
	alice := createUser(t, srv, "alice@example.com")
	// A viewer rule does not make alice an admin.
	send(t, srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"alice@example.com","role":"viewer","scopeType":"system"}`, 201)
	if r := do(t, srv, "DELETE", "/api/v1/users/"+adminID, "", ""); r.status != 400 {
		t.Fatalf("deleting the only local admin beside a viewer = %d, want 400", r.status)
	}
	send(t, srv, "POST", "/api/v1/access-rules", `{"subjectType":"user","subject":"alice@example.com","role":"admin","scopeType":"system"}`, 201)
	send(t, srv, "DELETE", "/api/v1/users/"+adminID, "", 204)
	if r := do(t, srv, "DELETE", "/api/v1/users/"+alice.ID, "", ""); r.status != 400 {
		t.Errorf("deleting alice, now the last local admin = %d %s, want 400", r.status, r.body)
	}
	if users := decode[[]runAIUser](t, get(t, srv, "/api/v1/users").body); usersNamed(users) != "alice@example.com" {
		t.Errorf("users = %s, want alice alone", usersNamed(users))
	}
}
