package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestNoTokenWithoutItsAuditRow: a token whose audit row cannot be written (the database is
// stalled while the key is still in the key cache) is not issued: 503 temporarily_unavailable
// with a sentence, and no access_token in the answer.
func TestNoTokenWithoutItsAuditRow(t *testing.T) {
	t.Parallel()
	stall := testdb.Stall(t, testdb.NewURL(t))
	pool, err := pgxpool.New(context.Background(), stall.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.NewWithTimeout(pool, 1500*time.Millisecond)
	srv := httptest.NewServer(web.New(deps(st)))
	t.Cleanup(srv.Close)
	id, secret := clientKey(t, st, "viewer", time.Now().Add(time.Hour))
	form := "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret
	if r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form); r.status != http.StatusOK {
		t.Fatalf("token before the stall = %d %s", r.status, r.body)
	}
	stall.Freeze()
	r := doAs(t, srv, "", "POST", "/api/v2/token", "application/x-www-form-urlencoded", form)
	stall.Thaw()
	m := jsonBody(t, r)
	if r.status != http.StatusServiceUnavailable || m["error"] != "temporarily_unavailable" || m["access_token"] != nil ||
		!strings.Contains(m["message"].(string), "could not be recorded") {
		t.Errorf("token while the audit log cannot be written = %d %s; want 503 temporarily_unavailable without a token", r.status, r.body)
	}
	r = doAs(t, srv, "", "POST", "/api/v1/token", "application/json", `{"grantType":"client_credentials","clientId":"`+id+`","clientSecret":"`+secret+`"}`)
	if r.status != http.StatusOK {
		t.Errorf("token after the stall = %d %s", r.status, r.body)
	}
}
