package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// TestRefreshTokenGrant: /api/v1/token answers a refresh token beside the access token; the
// refresh_token grant trades it for a new access token of the same key or account, until it is
// revoked, its key is revoked or its account signed out; revoking is idempotent.
func TestRefreshTokenGrant(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "right")
	id, secret := clientKey(t, st, "viewer", time.Now().Add(24*time.Hour))
	v1 := func(body string) response { return doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body) }
	refresh := func(token string) response {
		return v1(`{"grantType":"refresh_token","refreshToken":"` + token + `","clientID":"arbiter-cli"}`)
	}
	roleWith := func(token string) any {
		return jsonBody(t, doAs(t, srv, token, "GET", "/api/v1/me", "", ""))["role"]
	}

	r := v1(`{"grantType":"client_credentials","clientId":"` + id + `","clientSecret":"` + secret + `"}`)
	keyRefresh, _ := jsonBody(t, r)["refreshToken"].(string)
	if r.status != 200 || !strings.HasPrefix(keyRefresh, "arbrt_") || jsonBody(t, r)["expiresIn"] == nil {
		t.Fatalf("client_credentials = %d %s; want an access token, its lifetime and a refresh token", r.status, r.body)
	}
	r = refresh(keyRefresh)
	if r.status != 200 || jsonBody(t, r)["refreshToken"] != keyRefresh {
		t.Fatalf("refresh_token grant = %d %s; want 200 answering the same refresh token", r.status, r.body)
	}
	if role := roleWith(jsonBody(t, r)["accessToken"].(string)); role != "viewer" {
		t.Errorf("the refreshed access token acts as %v, want the key's role viewer", role)
	}

	// A logout revokes it; revoking again is no error; the revoked token is refused, saying so.
	for range 2 {
		if rv := doAs(t, srv, "", "POST", "/api/v1/token/revoke", "application/json", `{"refreshToken":"`+keyRefresh+`"}`); rv.status != 200 {
			t.Fatalf("revoke = %d %s, want 200", rv.status, rv.body)
		}
	}
	if r = refresh(keyRefresh); r.status != 401 || !strings.Contains(string(r.body), "revoked by a logout") {
		t.Errorf("a revoked refresh token = %d %s; want 401 saying it may have been revoked", r.status, r.body)
	}

	// A key revoked since: its refresh token no longer works.
	r = v1(`{"grantType":"client_credentials","clientId":"` + id + `","clientSecret":"` + secret + `"}`)
	keyRefresh = jsonBody(t, r)["refreshToken"].(string)
	if err := st.RevokeAPIKey(context.Background(), uuid.MustParse(id), store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	if r = refresh(keyRefresh); r.status != 401 || !strings.Contains(string(r.body), "API key this refresh token was issued for has been revoked") {
		t.Errorf("the refresh token of a revoked key = %d %s; want 401 naming the revoked key", r.status, r.body)
	}

	// A person's refresh token ends when an admin signs the account out.
	r = v1(`{"grantType":"password","username":"admin","password":"right"}`)
	userRefresh, _ := jsonBody(t, r)["refreshToken"].(string)
	if r = refresh(userRefresh); r.status != 200 || roleWith(jsonBody(t, r)["accessToken"].(string)) != "admin" {
		t.Fatalf("the admin's refresh = %d %s; want an admin's access token", r.status, r.body)
	}
	admin, err := st.LocalUser(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SignOutUser(context.Background(), admin.ID, time.Now(), store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	if r = refresh(userRefresh); r.status != 401 || !strings.Contains(string(r.body), "signed its account out") {
		t.Errorf("a signed-out account's refresh token = %d %s; want 401 saying it was signed out", r.status, r.body)
	}
}

// TestRefreshTokenGrant_Refusals: a refresh_token grant that does not say what it asks, or
// mixes in other credentials, is a 400 naming the field.
func TestRefreshTokenGrant_Refusals(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	for body, want := range map[string]string{
		`{"grantType":"refresh_token"}`:                                                                          "needs refreshToken",
		`{"grantType":"refresh_token","refreshToken":"arb_0_x"}`:                                                 "refreshToken is not a refresh token",
		`{"grantType":"password","username":"a","password":"b","refreshToken":"arbrt_x"}`:                        "refreshToken goes with the refresh_token grant only",
		`{"grantType":"refresh_token","refreshToken":"arbrt_6723b9d773d15e4ca494d8fdeddc541c_s","password":"p"}`: "takes no clientSecret, username or password",
	} {
		r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body)
		if r.status != 400 || !strings.Contains(string(r.body), want) {
			t.Errorf("%s = %d %s; want 400 saying %q", body, r.status, r.body, want)
		}
	}
	if r := doAs(t, srv, "", "POST", "/api/v1/token/revoke", "application/json", `{"refreshToken":"nope"}`); r.status != 400 || !strings.Contains(string(r.body), "refreshToken") {
		t.Errorf("revoking a malformed token = %d %s; want 400 naming refreshToken", r.status, r.body)
	}
}

// TestRefreshTokens_BoundedPerSubject: a subject holds at most MaxRefreshTokensPerSubject
// refresh tokens; issuing one more ends its oldest.
func TestRefreshTokens_BoundedPerSubject(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	id, secret := clientKey(t, st, "viewer", time.Now().Add(24*time.Hour))
	var tokens []string
	for range store.MaxRefreshTokensPerSubject + 1 {
		r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json",
			fmt.Sprintf(`{"grantType":"client_credentials","clientId":%q,"clientSecret":%q}`, id, secret))
		tokens = append(tokens, jsonBody(t, r)["refreshToken"].(string))
	}
	ok := func(token string) int {
		return doAs(t, srv, "", "POST", "/api/v1/token", "application/json", `{"grantType":"refresh_token","refreshToken":"`+token+`"}`).status
	}
	if s := ok(tokens[0]); s != 401 {
		t.Errorf("the oldest of %d refresh tokens answers %d, want 401: at most %d are kept", len(tokens), s, store.MaxRefreshTokensPerSubject)
	}
	if s := ok(tokens[1]); s != 200 {
		t.Errorf("the second oldest answers %d, want 200", s)
	}
}

// TestUnknownRefreshTokens_AreCountedNotWrittenEach: refresh tokens anyone can make up are
// refused and counted each; the audit log takes one row for them within the minute.
func TestUnknownRefreshTokens_AreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	srv, _, st, m := refusalServer(t)
	const n = 5
	for range n {
		body := `{"grantType":"refresh_token","refreshToken":"arbrt_` + strings.ReplaceAll(uuid.NewString(), "-", "") + `_guess"}`
		if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status != http.StatusUnauthorized {
			t.Fatalf("an unknown refresh token = %d %s, want 401", r.status, r.body)
		}
	}
	if got := refusalsCounted(t, m, "/api/v1/token", "unknown_refresh"); got != n {
		t.Errorf("arbiter_refused_requests_total{route=/api/v1/token, reason=unknown_refresh} = %v, want %d", got, n)
	}
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != 1 {
		t.Errorf("%d audit rows for %d unknown refresh tokens within a minute, want 1", len(rows), n)
	}
}
