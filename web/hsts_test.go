package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// TestHSTSOnlyOverHTTPS: Strict-Transport-Security is sent when the browser reached Arbiter
// over HTTPS (TLS, or a trusted proxy's X-Forwarded-Proto: https), never over plain HTTP nor
// on an untrusted peer's say-so.
func TestHSTSOnlyOverHTTPS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, trusted, proto string
		want                 bool
	}{
		{"plain HTTP", "", "", false},
		{"an untrusted peer says https", "10.0.0.0/8", "https", false},
		{"a trusted proxy says http", "127.0.0.1/32", "http", false},
		{"a trusted proxy says https", "127.0.0.1/32", "https", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _, _ := loginServer(t, trust(t, tc.trusted))
			req, _ := http.NewRequest("GET", srv.URL+"/login", nil)
			if tc.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			got := res.Header.Get("Strict-Transport-Security")
			if tc.want && !strings.HasPrefix(got, "max-age=31536000") {
				t.Errorf("Strict-Transport-Security = %q, want max-age=31536000", got)
			}
			if !tc.want && got != "" {
				t.Errorf("Strict-Transport-Security = %q over plain HTTP, want none", got)
			}
		})
	}
}

// TestHSTSOverTLS: served over TLS directly, every answer carries Strict-Transport-Security.
func TestHSTSOverTLS(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	srv := httptest.NewTLSServer(web.New(deps(st)))
	t.Cleanup(srv.Close)
	res, err := srv.Client().Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Errorf("over TLS Strict-Transport-Security = %q, want max-age=31536000", got)
	}
}
