package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// TestMetricsAnswerWithoutSignInAndNameNoOne: /metrics answers anonymous scrapers (Prometheus
// has no session) without setting a cookie, answers a signed-in browser the same, and tells
// neither anything about anyone: requests are labelled by route template, never by URL, so
// an id in a path, a user, a session or a key never shows.
func TestMetricsAnswerWithoutSignInAndNameNoOne(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	m := metrics.New()
	d := deps(st)
	d.Metrics, d.Requests = m.Handler(), m
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	key := newAPIKey(t, st, "admin", "system", "")
	withAdmin(t, st, "correct horse")
	b := newBrowserClient(t, srv)
	_, page := b.get("/login")
	if status, _ := b.post("/login", url.Values{"_csrf": {csrfIn(t, page)}, "username": {"admin"}, "password": {"correct horse"}}); status != http.StatusSeeOther {
		t.Fatalf("login = %d", status)
	}
	if b.session() == "" {
		t.Fatal("no session after login")
	}
	secretID := uuid.NewString()
	asked := doAs(t, srv, key, "GET", "/api/v1/org-unit/projects/"+secretID, "", "")
	if r := doAs(t, srv, key, "GET", "/no-such-page/"+secretID, "", ""); r.status != http.StatusNotFound {
		t.Fatalf("GET of a path no route matches = %d, want 404", r.status)
	}

	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	anonymous, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("anonymous GET /metrics = %d, want 200", res.StatusCode)
	}
	if c := res.Header.Values("Set-Cookie"); len(c) > 0 {
		t.Errorf("/metrics set cookies %q", c)
	}
	status, signedIn := b.get("/metrics")
	if status != http.StatusOK {
		t.Fatalf("signed-in GET /metrics = %d", status)
	}

	for name, body := range map[string]string{"anonymous": string(anonymous), "signed in": signedIn} {
		for what, secret := range map[string]string{"the API key": key, "the session": b.session(), "an id from a URL": secretID,
			"the user's name": "Administrator", "the password": "correct horse"} {
			if strings.Contains(body, secret) {
				t.Errorf("the %s scrape shows %s", name, what)
			}
		}
		var parser expfmt.TextParser
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("the %s scrape does not parse: %v", name, err)
		}
		for _, f := range families {
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					switch l.GetName() {
					case "user", "subject", "session", "path", "url":
						t.Errorf("%s has a %q label", f.GetName(), l.GetName())
					}
				}
			}
		}
		requests := families["arbiter_http_request_duration_seconds"]
		if n := countWith(requests, map[string]string{"route": "/api/v1/org-unit/projects/:id", "method": "GET", "code": strconv.Itoa(asked.status)}); n != 1 {
			t.Errorf("the %s scrape counts %d GETs of /api/v1/org-unit/projects/:id answered %d, want 1", name, n, asked.status)
		}
		if n := countWith(requests, map[string]string{"route": "unmatched", "code": "404"}); n < 1 {
			t.Errorf("the %s scrape counts no request that matched no route", name)
		}
		if _, ok := families["go_goroutines"]; !ok {
			t.Errorf("the %s scrape has no Go runtime metrics", name)
		}
	}
}

// countWith is the sample count of the histogram series of f whose labels include want.
func countWith(f *dto.MetricFamily, want map[string]string) uint64 {
	var n uint64
	for _, s := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && have[k] == v
		}
		if match {
			n += s.GetHistogram().GetSampleCount()
		}
	}
	return n
}
