package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/common/expfmt"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// refusalServer serves the real router over a fresh database with Arbiter's metrics.
func refusalServer(t *testing.T) (*httptest.Server, *web.Server, *store.Store, *metrics.Registry) {
	t.Helper()
	st := store.New(testdb.New(t))
	m := metrics.New()
	d := deps(st)
	d.Metrics, d.Requests, d.Refusals = m.Handler(), m, m
	h := web.New(d)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h, st, m
}

// refusalsCounted is arbiter_refused_requests_total for route and reason as scraped.
func refusalsCounted(t *testing.T, m *metrics.Registry, route, reason string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, s := range families["arbiter_refused_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range s.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["route"] == route && labels["reason"] == reason {
			n += s.GetCounter().GetValue()
		}
	}
	return n
}

// refusalRows are the audit rows of refusals with the given result and HTTP status.
func refusalRows(t *testing.T, st *store.Store, result string, status int) []store.AuditEntry {
	t.Helper()
	all, err := st.AuditEntries(context.Background(), 5000)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditEntry
	for _, e := range all {
		if e.Result == result && e.HTTPStatus == status {
			out = append(out, e)
		}
	}
	return out
}

// refusalsOnRecord adds up how many refusals the rows stand for (each row's "refusals").
func refusalsOnRecord(t *testing.T, rows []store.AuditEntry) int {
	t.Helper()
	n := 0
	for _, e := range rows {
		count, ok := e.Changes["refusals"].(float64)
		if !ok {
			t.Fatalf("refusal row %+v does not say how many refusals it stands for", e)
		}
		n += int(count)
	}
	return n
}

// TestUnauthenticatedRequestsAreCountedNotWrittenEach: a client without credentials posting
// again and again gets its 401 each time; every refusal is counted in
// arbiter_refused_requests_total, but the audit log takes one row for the lot within the
// minute, not one each.
func TestUnauthenticatedRequestsAreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	srv, h, st, m := refusalServer(t)
	const n = 200
	for range n {
		if r := doAs(t, srv, "", "POST", "/api/v1/org-unit/projects", "application/json", `{"name":"p"}`); r.status != http.StatusUnauthorized {
			t.Fatalf("unauthenticated POST = %d %s, want 401", r.status, r.body)
		}
	}
	if got := refusalsCounted(t, m, "/api/v1/org-unit/projects", "unauthenticated"); got != n {
		t.Errorf("arbiter_refused_requests_total{route=/api/v1/org-unit/projects, reason=unauthenticated} = %v, want %d", got, n)
	}
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != 1 {
		t.Errorf("%d audit rows for %d refusals within a minute, want 1", len(rows), n)
	}
	h.FlushRefusals(context.Background()) // as the server does a minute on, or when it stops
	rows := refusalRows(t, st, "denied", http.StatusUnauthorized)
	if len(rows) != 2 || refusalsOnRecord(t, rows) != n {
		t.Errorf("after the flush %d rows stand for %d refusals; want 2 rows for all %d", len(rows), refusalsOnRecord(t, rows), n)
	}
}

// TestUnknownClientGrantsAreCountedNotWrittenEach: client-credential grants naming API keys
// that do not exist are refused and counted each; the audit log takes one row for the lot,
// and no client id ever becomes a metric label.
func TestUnknownClientGrantsAreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	srv, h, st, m := refusalServer(t)
	const n = 50
	var lastID string
	for range n {
		lastID = uuid.NewString()
		body := `{"grantType":"client_credentials","clientId":"` + lastID + `","clientSecret":"guess"}`
		if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status != http.StatusUnauthorized {
			t.Fatalf("grant of an unknown client = %d %s, want 401", r.status, r.body)
		}
	}
	if got := refusalsCounted(t, m, "/api/v1/token", "unknown_client"); got != n {
		t.Errorf("arbiter_refused_requests_total{route=/api/v1/token, reason=unknown_client} = %v, want %d", got, n)
	}
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != 1 {
		t.Errorf("%d audit rows for %d unknown-client grants within a minute, want 1", len(rows), n)
	}
	h.FlushRefusals(context.Background())
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != 2 || refusalsOnRecord(t, rows) != n {
		t.Errorf("after the flush %d rows stand for %d unknown-client grants; want 2 rows for all %d", len(rows), refusalsOnRecord(t, rows), n)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if strings.Contains(rec.Body.String(), lastID) {
		t.Errorf("the metrics show a client id a caller sent")
	}
}

// TestFailedSignInsOfRealAccountsAreWrittenEach: failed sign-ins of an account that exists, and
// failed grants of an API key that exists, still write one audit row each.
func TestFailedSignInsOfRealAccountsAreWrittenEach(t *testing.T) {
	t.Parallel()
	srv, _, st, _ := refusalServer(t)
	withAdmin(t, st, "right")
	id, _ := clientKey(t, st, "viewer", time.Now().Add(time.Hour))
	const passwords, secrets = 3, 5 // three: the sign-in throttle's free attempts
	for range passwords {
		body := `{"grantType":"password","username":"admin","password":"wrong"}`
		if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password = %d %s, want 401", r.status, r.body)
		}
	}
	for range secrets {
		body := `{"grantType":"client_credentials","clientId":"` + id + `","clientSecret":"wrong"}`
		if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong client secret = %d %s, want 401", r.status, r.body)
		}
	}
	rows := refusalRows(t, st, "denied", http.StatusUnauthorized)
	bySubject := map[string]int{}
	for _, e := range rows {
		bySubject[e.Subject]++
	}
	if bySubject["admin"] != passwords || bySubject[id] != secrets {
		t.Errorf("audit rows by subject = %v; want %d for admin and %d for key %s", bySubject, passwords, secrets, id)
	}
}

// TestThrottledSignInsAreCountedNotWrittenEach: once the sign-in throttle holds an account,
// each further attempt is answered 429 and counted, and the audit log takes one row for the
// lot within the minute; the attempts the throttle lets through are a row each.
func TestThrottledSignInsAreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	srv, _, st, m := refusalServer(t)
	withAdmin(t, st, "right")
	checked, throttled := 0, 0
	for range 3 + 20 { // three: the throttle's free attempts
		body := `{"grantType":"password","username":"admin","password":"wrong"}`
		switch r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
			throttled++
		default:
			t.Fatalf("wrong password = %d %s, want 401 or 429", r.status, r.body)
		}
	}
	if throttled == 0 {
		t.Fatalf("no attempt of %d was throttled", checked)
	}
	if got := refusalsCounted(t, m, "/api/v1/token", "throttled"); got != float64(throttled) {
		t.Errorf("arbiter_refused_requests_total{route=/api/v1/token, reason=throttled} = %v, want %d", got, throttled)
	}
	if rows := refusalRows(t, st, "denied", http.StatusTooManyRequests); len(rows) != 1 {
		t.Errorf("%d audit rows for %d throttled sign-ins within a minute, want 1", len(rows), throttled)
	}
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != checked {
		t.Errorf("%d audit rows for %d checked sign-ins of a real account, want one each", len(rows), checked)
	}
}

// TestSignInsOfNoAccountAreCountedNotWrittenEach: password sign-ins naming accounts that do not
// exist (as many as the throttle lets through from one address) are refused and counted each;
// the audit log takes one row for them within the minute.
func TestSignInsOfNoAccountAreCountedNotWrittenEach(t *testing.T) {
	t.Parallel()
	srv, _, st, m := refusalServer(t)
	const n = 3 // the throttle's free attempts per address
	for i := range n {
		body := `{"grantType":"password","username":"nobody-` + string(rune('a'+i)) + `","password":"guess"}`
		if r := doAs(t, srv, "", "POST", "/api/v1/token", "application/json", body); r.status != http.StatusUnauthorized {
			t.Fatalf("sign-in of no account = %d %s, want 401", r.status, r.body)
		}
	}
	if got := refusalsCounted(t, m, "/api/v1/token", "unknown_account"); got != n {
		t.Errorf("arbiter_refused_requests_total{route=/api/v1/token, reason=unknown_account} = %v, want %d", got, n)
	}
	if rows := refusalRows(t, st, "denied", http.StatusUnauthorized); len(rows) != 1 {
		t.Errorf("%d audit rows for %d sign-ins of no account within a minute, want 1", len(rows), n)
	}
}
