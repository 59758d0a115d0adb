package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// clientKey creates an API key with role at system scope expiring at expires and returns its
// client id and secret, as the token endpoints take them.
func clientKey(t *testing.T, st *store.Store, role string, expires time.Time) (id, secret string) {
	t.Helper()
	kid := uuid.New()
	token, hash := auth.NewAPIKey(kid)
	if _, err := st.CreateAPIKey(context.Background(), store.NewAPIKey{ID: kid, Name: "client-" + kid.String()[:8], Role: role,
		ScopeType: "system", ExpiresAt: expires, SecretHash: hash}, store.Actor{Subject: "test", SubjectType: "system"}); err != nil {
		t.Fatal(err)
	}
	_, secret, _ = auth.ParseAPIKey(token)
	return kid.String(), secret
}

func jsonBody(t *testing.T, r response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %s", r.status, r.body)
	}
	return m
}

// TestTokenEndpointsGrantBearerTokens: both grants on both routes give a token that works as
// Bearer with the role of its key or account, and says how long it lasts.
func TestTokenEndpointsGrantBearerTokens(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "right")
	id, secret := clientKey(t, st, "viewer", time.Now().Add(24*time.Hour))

	check := func(name, token, wantRole string) {
		t.Helper()
		if !strings.HasPrefix(token, auth.AccessTokenPrefix) {
			t.Fatalf("%s: token %q", name, token)
		}
		me := doAs(t, srv, token, "GET", "/api/v1/me", "", "")
		if me.status != 200 || jsonBody(t, me)["role"] != wantRole {
			t.Fatalf("%s: GET /api/v1/me with the token = %d %s; want role %s", name, me.status, me.body, wantRole)
		}
	}
	v1 := func(body string) response {
		return doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body)
	}
	v2 := func(form url.Values) response {
		return doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form.Encode())
	}

	r := v1(`{"grantType":"client_credentials","clientId":"` + id + `","clientSecret":"` + secret + `"}`)
	if r.status != 200 {
		t.Fatalf("v1 client_credentials = %d %s", r.status, r.body)
	}
	viewerToken, _ := jsonBody(t, r)["accessToken"].(string)
	check("v1 client_credentials", viewerToken, "viewer")
	// A viewer's token may read but not change.
	if w := doAs(t, srv, viewerToken, "POST", "/api/v1/node-pools", "application/json", `{"name":"p"}`); w.status != 403 {
		t.Errorf("a viewer key's token creating a node pool = %d, want 403", w.status)
	}

	r = v1(`{"grantType":"password","username":"admin","password":"right"}`)
	if r.status != 200 {
		t.Fatalf("v1 password = %d %s", r.status, r.body)
	}
	tok, _ := jsonBody(t, r)["accessToken"].(string)
	check("v1 password", tok, "admin")

	for _, form := range []url.Values{
		{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"openid"}},
		{"grant_type": {"password"}, "username": {"admin"}, "password": {"right"}},
	} {
		r := v2(form)
		m := jsonBody(t, r)
		exp, _ := m["expires_in"].(float64)
		if r.status != 200 || m["token_type"] != "Bearer" || exp < 3500 || exp > 3600 || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("v2 %s = %d %s (Cache-Control %q)", form.Get("grant_type"), r.status, r.body, r.header.Get("Cache-Control"))
		}
		want := "viewer"
		if form.Get("grant_type") == "password" {
			want = "admin"
		}
		check("v2 "+form.Get("grant_type"), m["access_token"].(string), want)
	}

	// Issued tokens are audited like sign-ins.
	rows := auditRows(t, st, "access-token")
	if len(rows) != 4 {
		t.Fatalf("%d access-token audit rows, want 4: %+v", len(rows), rows)
	}
	for _, e := range rows {
		if e.Result != "success" || e.Action != "issue" {
			t.Errorf("audit row %+v", e)
		}
	}
}

// TestAccessTokensEndWithTheirKey: a token never outlives its key; a revoked key's token is
// refused at once; a token of another server's key or a changed one is refused.
func TestAccessTokensEndWithTheirKey(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	form := func(id, secret string) string {
		return url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}.Encode()
	}
	get := func(id, secret string) (string, float64) {
		t.Helper()
		r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form(id, secret))
		if r.status != 200 {
			t.Fatalf("token = %d %s", r.status, r.body)
		}
		m := jsonBody(t, r)
		return m["access_token"].(string), m["expires_in"].(float64)
	}

	// Revocation.
	id, secret := clientKey(t, st, "admin", time.Now().Add(time.Hour))
	tok, _ := get(id, secret)
	if r := doAs(t, srv, tok, "GET", "/api/v1/api-keys", "", ""); r.status != 200 {
		t.Fatalf("the admin key's token listing keys = %d %s", r.status, r.body)
	}
	if r := do(t, srv, "DELETE", "/api/v1/api-keys/"+id, "", ""); r.status != 204 {
		t.Fatalf("revoke = %d %s", r.status, r.body)
	}
	r := doAs(t, srv, tok, "GET", "/api/v1/me", "", "")
	if msg, _ := jsonBody(t, r)["message"].(string); r.status != 401 || !strings.Contains(msg, "revoked") {
		t.Errorf("a revoked key's token = %d %s, want 401 saying the key was revoked", r.status, r.body)
	}
	if r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form(id, secret)); r.status != 401 || jsonBody(t, r)["error"] != "invalid_client" {
		t.Errorf("a token for a revoked key = %d %s, want 401 invalid_client", r.status, r.body)
	}

	// Expiry: the key expires in four seconds (time to get a token on a busy machine), so does its token.
	id, secret = clientKey(t, st, "viewer", time.Now().Add(4*time.Second))
	tok, expiresIn := get(id, secret)
	if expiresIn > 4 {
		t.Fatalf("a token for a key that expires in 4 s says expires_in %v", expiresIn)
	}
	poll.UntilNil(t, "the token of the expired key is refused", 30*time.Second, func() error {
		r = doAs(t, srv, tok, "GET", "/api/v1/me", "", "")
		switch r.status {
		case 401:
			return nil
		case 200:
			return fmt.Errorf("it still answers 200 %s", r.body)
		}
		t.Fatalf("the token of a key about to expire answers %d %s, want 200 until it expires, then 401", r.status, r.body)
		return nil
	})
	if msg, _ := jsonBody(t, r)["message"].(string); !strings.Contains(msg, "expired") {
		t.Errorf("an expired token = 401 %s, want a sentence saying it expired", r.body)
	}

	// Tokens signed by another key, or changed, are refused.
	other := auth.NewAccessTokens(nil).Issue(auth.TokenForAPIKey, uuid.MustParse(id), time.Now().Add(time.Hour))
	for _, bad := range []string{other, tok[:len(tok)-2] + "AA", auth.AccessTokenPrefix + "x"} {
		if r := doAs(t, srv, bad, "GET", "/api/v1/me", "", ""); r.status != 401 {
			t.Errorf("token %q = %d, want 401", bad, r.status)
		}
	}
}

// TestPasswordGrantIsThrottledLikeSignIn: wrong passwords through the token endpoint count in
// the sign-in throttle (the store sees three failures for the account and the address); while
// the throttle blocks, both token routes and the login form answer 429 with Retry-After even
// for the right password; once cleared, the right one gets a token. The block is set through
// the store rather than waited for, so a slow machine cannot outlast it.
func TestPasswordGrantIsThrottledLikeSignIn(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	withAdmin(t, st, "right")
	pw := func(p string) response {
		return doAs(t, srv, "", "POST", "/api/v1/token", "application/json", `{"grantType":"password","username":"admin","password":"`+p+`"}`)
	}
	for i := range 3 {
		if r := pw("wrong"); r.status != 401 {
			t.Fatalf("wrong password %d = %d %s", i+1, r.status, r.body)
		}
	}
	// The fourth attempt, made here on the store, finds three failures for both keys; it
	// blocks them for ten minutes. (While the third failure's own block lasts, nothing is
	// counted: wait it out.)
	keys := []string{"account:admin", "address:127.0.0.1"}
	ctx := context.Background()
	var counted []int
	poll.UntilNil(t, "the third failure's block is over and the attempt is counted", time.Minute, func() error {
		counted = nil
		wait, err := st.ReserveLoginAttempt(ctx, keys, func(n int) time.Duration { counted = append(counted, n); return 10 * time.Minute })
		if err != nil {
			t.Fatal(err)
		}
		if wait != 0 {
			return fmt.Errorf("the throttle still blocks for %v", wait)
		}
		return nil
	})
	if len(counted) != 2 || counted[0] != 4 || counted[1] != 4 {
		t.Fatalf("after three wrong passwords the throttle counts attempt %v, want the 4th for the account and the address", counted)
	}
	r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", "grant_type=password&username=admin&password=right")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || jsonBody(t, r)["error"] != "slow_down" {
		t.Fatalf("v2 while blocked = %d %s (Retry-After %q), want 429 slow_down", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := pw("right"); r.status != http.StatusTooManyRequests || !strings.Contains(jsonBody(t, r)["message"].(string), "wait") {
		t.Fatalf("v1 while blocked = %d %s, want 429", r.status, r.body)
	}
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	if status, _ := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {"admin"}, "password": {"right"}}); status != http.StatusTooManyRequests {
		t.Errorf("the login form while blocked = %d, want 429", status)
	}
	if err := st.ClearLoginFailures(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if r := pw("right"); r.status != 200 {
		t.Fatalf("the right password once cleared = %d %s", r.status, r.body)
	}
	denied := 0
	for _, e := range auditRows(t, st, "access-token") {
		if e.Result == "denied" && e.Subject == "admin" {
			denied++
		}
	}
	if denied != 5 {
		t.Errorf("%d denied token requests audited, want 5 (3 wrong, 2 throttled)", denied)
	}
}

// TestTokenRequestRefusals: malformed requests are 400 naming the field (415 for the wrong
// body type), wrong credentials 401; never 500.
func TestTokenRequestRefusals(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	id, secret := clientKey(t, st, "viewer", time.Now().Add(time.Hour))
	for _, c := range []struct {
		path, ct, body string
		status         int
		want           string // in the sentence
		oauth          string // v2's error code
	}{
		{"/api/v1/token", "application/json", `{}`, 400, "grantType is missing", ""},
		{"/api/v1/token", "application/json", `{"grantType":"implicit"}`, 400, "grantType \"implicit\"", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"` + id + `"}`, 400, "clientSecret", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"nope","clientSecret":"x"}`, 400, "clientId must be", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientID":"nope","clientSecret":"x"}`, 400, "clientID must be", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"` + id + `","clientID":"` + uuid.NewString() + `","clientSecret":"x"}`, 400, "name different clients", ""},
		{"/api/v1/token", "application/json", `{"grantType":"password","username":"admin"}`, 400, "password", ""},
		{"/api/v1/token", "application/json", `{"grantType":"password","user":"admin"}`, 400, "unknown field", ""},
		{"/api/v1/token", "application/json", `{"grantType":1}`, 400, "grantType must be a string", ""},
		{"/api/v1/token", "application/x-www-form-urlencoded", `grantType=password`, 415, "JSON", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"` + id + `","clientSecret":"wrong"}`, 401, "client credentials", ""},
		{"/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"` + uuid.NewString() + `","clientSecret":"` + secret + `"}`, 401, "client credentials", ""},
		{"/api/v2/token", "application/json", `{"grant_type":"password"}`, 415, "form", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", ``, 400, "grant_type is missing", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=authorization_code`, 400, "grant_type", "unsupported_grant_type"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=client_credentials&client_id=` + id, 400, "client_secret", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=password&grant_type=password`, 400, "grant_type is sent 2 times", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=client_credentials&client_id=` + id + `&client_secret=` + secret + `&username=a`, 400, "takes no username", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=client_credentials&client_id=` + id + `&client_secret=x` + strings.Repeat("y", 300), 400, "client_secret is", "invalid_request"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=client_credentials&client_id=` + id + `&client_secret=wrong`, 401, "client credentials", "invalid_client"},
		{"/api/v2/token", "application/x-www-form-urlencoded", `grant_type=password&username=nobody&password=x`, 401, "not right", "invalid_grant"},
	} {
		r := doAs(t, srv, "", "POST", c.path, c.ct, c.body)
		m := jsonBody(t, r)
		msg, _ := m["message"].(string)
		if r.status != c.status || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s = %d %s; want %d with %q", c.path, c.body, r.status, r.body, c.status, c.want)
		}
		if c.oauth != "" && (m["error"] != c.oauth || m["error_description"] != msg) {
			t.Errorf("%s %s: OAuth error %v, want %s with the sentence", c.path, c.body, m["error"], c.oauth)
		}
	}
	// The whole key as the console shows it is also a client secret; another key's is refused.
	whole := auth.APIKeyPrefix + strings.ReplaceAll(id, "-", "") + "_" + secret
	if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"`+id+`","clientSecret":"`+whole+`"}`); r.status != 200 {
		t.Errorf("the whole key as clientSecret = %d %s", r.status, r.body)
	}
	if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"`+uuid.NewString()+`","clientSecret":"`+whole+`"}`); r.status != 400 {
		t.Errorf("another key's whole token as clientSecret = %d %s, want 400", r.status, r.body)
	}
}

// TestAccessPageShowsClientCredentials: a key made on the Access page shows its client id and
// secret once, and they get a token.
func TestAccessPageShowsClientCredentials(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	r := do(t, srv, "POST", "/access/keys", "application/x-www-form-urlencoded", url.Values{"name": {"runai"}, "role": {"viewer"}, "days": {"30"}}.Encode())
	id := regexp.MustCompile(`id="new-key-client-id">([^<]+)<`).FindSubmatch(r.body)
	secret := regexp.MustCompile(`id="new-key-client-secret">([^<]+)<`).FindSubmatch(r.body)
	if r.status != 201 || id == nil || secret == nil {
		t.Fatalf("create key form = %d without the client id and secret: %.2000s", r.status, r.body)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {html.UnescapeString(string(id[1]))},
		"client_secret": {html.UnescapeString(string(secret[1]))}}
	if tok := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form.Encode()); tok.status != 200 {
		t.Fatalf("the shown client credentials get %d %s", tok.status, tok.body)
	}
	if list := do(t, srv, "GET", "/access", "", ""); strings.Contains(string(list.body), "new-key-client-secret") {
		t.Error("the Access page shows a client secret again")
	}
}
