package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTokenCredentialsNotFromTheQueryString: RFC 6749 section 2.3.1 keeps client credentials
// out of the request URI (it ends up in logs and proxies' histories); /api/v2/token refuses
// credentials in the query string with a sentence, even when the body is a good request.
func TestTokenCredentialsNotFromTheQueryString(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	id, secret := clientKey(t, st, "viewer", time.Now().Add(time.Hour))
	for _, c := range []struct{ query, body string }{
		{"?client_secret=" + secret, "grant_type=client_credentials&client_id=" + id},
		{"?grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret, ""},
		{"?password=right", "grant_type=password&username=admin"},
		{"?client_id=" + id, "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret},
	} {
		r := doAs(t, srv, "", "POST", "/api/v2/token"+c.query, "application/x-www-form-urlencoded", c.body)
		m := jsonBody(t, r)
		msg, _ := m["message"].(string)
		if r.status != http.StatusBadRequest || !strings.Contains(msg, "query string") || m["error"] != "invalid_request" {
			t.Errorf("POST /api/v2/token%s with %q = %d %s; want 400 invalid_request naming the query string", c.query, c.body, r.status, r.body)
		}
	}
	if r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded",
		"grant_type=client_credentials&client_id="+id+"&client_secret="+secret); r.status != http.StatusOK {
		t.Errorf("the same credentials in the body = %d %s, want 200", r.status, r.body)
	}
}
