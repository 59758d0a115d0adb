package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestInvalidAuthorizationDoesNotSkipCSRF: only a valid API credential makes a request an API
// call exempt from the CSRF check; a garbage Authorization header on the sign-in form (a public
// route, where the failed credential is not refused) leaves the form's check in place.
func TestInvalidAuthorizationDoesNotSkipCSRF(t *testing.T) {
	t.Parallel()
	srv, _, _ := loginServer(t, nil)
	for _, header := range []string{"Bearer garbage", "Bearer arb_" + strings.Repeat("0", 32) + "_nope", "bearer x", "Basic YWRtaW46cmlnaHQ="} {
		req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(url.Values{"username": {"admin"}, "password": {"right"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", header)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, res)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "sign-in form has expired") {
			t.Errorf("POST /login without the form token, Authorization %q = %d %.200s; want 403", header, res.StatusCode, body)
		}
		for _, ck := range res.Cookies() {
			if ck.Name == "arbiter_session" && ck.Value != "" {
				t.Errorf("Authorization %q: the forged sign-in started a session", header)
			}
		}
	}
}
