package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5/pgxpool"
)

// /readyz pings under a deadline of its own, shorter than the store's, so that a probe gets
// its 503 within about 2 s whatever --database-timeout says; the API and the pages answer 503
// once the store's deadline passes.
func TestStalledDatabaseAnswers503(t *testing.T) {
	t.Parallel()
	stall := testdb.Stall(t, testdb.NewURL(t))
	pool, err := pgxpool.New(context.Background(), stall.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.NewWithTimeout(pool, 4*time.Second)
	d := deps(st)
	d.Metrics = metrics.New().Handler()
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	if r := do(t, srv, "GET", "/readyz", "", ""); r.status != http.StatusOK {
		t.Fatalf("/readyz = %d before the stall", r.status)
	}

	stall.Freeze()
	began := time.Now()
	r := do(t, srv, "GET", "/readyz", "", "")
	took := time.Since(began)
	t.Logf("/readyz with the database stalled: %d in %s", r.status, took.Round(10*time.Millisecond))
	// The store alone would take 4 s; /readyz's own deadline is 2 s. Generous: under 3.5 s.
	if r.status != http.StatusServiceUnavailable || took > 3500*time.Millisecond {
		t.Errorf("/readyz = %d after %s, want 503 within about 2 s", r.status, took)
	}
	// A session cookie sent along with a probe or a scrape is not looked up: /healthz and
	// /metrics stay 200.
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/metrics": http.StatusOK, "/static/arbiter.css": http.StatusOK} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "arbiter_session", Value: "a-session-the-database-would-be-asked-for"})
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s with a session cookie while the database is stalled = %d, want %d", path, res.StatusCode, want)
		}
	}
	// The API key was validated (and cached) before the stall; the lists still need the database.
	for _, path := range []string{"/api/v1/node-pools", "/node-pools"} {
		began := time.Now()
		r := do(t, srv, "GET", path, "", "")
		took := time.Since(began)
		t.Logf("GET %s with the database stalled: %d in %s", path, r.status, took.Round(10*time.Millisecond))
		if r.status != http.StatusServiceUnavailable || !strings.Contains(strings.ToLower(string(r.body)), "the database is unavailable") || took > 15*time.Second {
			t.Errorf("GET %s = %d after %s, want 503 with the database sentence: %.200s", path, r.status, took, r.body)
		}
	}
	stall.Thaw()
	poll.UntilNil(t, "the API answers again after the stall ended", 15*time.Second, func() error {
		if r := do(t, srv, "GET", "/api/v1/node-pools", "", ""); r.status != http.StatusOK {
			return fmt.Errorf("GET /api/v1/node-pools = %d %.200s", r.status, r.body)
		}
		return nil
	})
}
