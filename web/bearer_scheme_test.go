package web_test

import (
	"net/http"
	"testing"
)

// TestBearerSchemeIsCaseInsensitive: RFC 7235 section 2.1: the auth-scheme is
// case-insensitive; "bearer" and "BEARER" work as "Bearer" does.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	token := tokenOf(srv)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", scheme+" "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, res)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("Authorization: %s <key> = %d %.200s, want 200", scheme, res.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearerx "+token)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("Authorization: Bearerx <key> = %d, want 401", res.StatusCode)
	}
}
