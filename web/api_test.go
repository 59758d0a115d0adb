package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { testdb.Main(m) }

var quiet = slog.New(slog.DiscardHandler)

// newAPI serves the real router over a fresh, migrated database.
func newAPI(t *testing.T) (*httptest.Server, *store.Store) {
	t.Helper()
	st := store.New(testdb.New(t))
	srv := httptest.NewServer(web.New(deps(st)))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	return srv, st
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do calls srv as the admin newAPI signed in (see signIn).
func do(t *testing.T, srv *httptest.Server, method, path, contentType, body string) response {
	t.Helper()
	return doAs(t, srv, tokenOf(srv), method, path, contentType, body)
}

// doAs calls srv with the bearer token (none when token is "").
func doAs(t *testing.T, srv *httptest.Server, token, method, path, contentType, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func getJSON(t *testing.T, srv *httptest.Server, path string) map[string]any {
	t.Helper()
	r := do(t, srv, "GET", path, "", "")
	if r.status != 200 {
		t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
	}
	return r.json(t)
}

func items(m map[string]any, key string) []map[string]any {
	raw, _ := m[key].([]any)
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

func find(list []map[string]any, name string) map[string]any {
	for _, x := range list {
		if x["name"] == name {
			return x
		}
	}
	return nil
}

// TestRunAIProcedure follows Run:ai's "Updating the Default Mapping" steps with the API.
func TestRunAIProcedure(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	types := items(getJSON(t, srv, "/api/v1/workload-types"), "types")
	if len(types) != 37 {
		t.Fatalf("got %d workload types, want 37", len(types))
	}
	pytorch := find(types, "PyTorchJob")
	if pytorch == nil || pytorch["effectivePriorityName"] != "low" {
		t.Fatalf("PyTorchJob = %v", pytorch)
	}
	high := find(items(getJSON(t, srv, "/api/v1/workload-priorities"), "priorities"), "high")
	if high == nil || high["value"] != float64(125) || high["clusterStatus"] != "Unknown" {
		t.Fatalf("priority high = %v", high)
	}
	r := do(t, srv, "PUT", "/api/v1/workload-types/"+pytorch["id"].(string), "application/json", `{"priorityId":"`+high["id"].(string)+`"}`)
	if r.status != 200 {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
	got := r.json(t)
	if got["priorityId"] != high["id"] || got["priorityName"] != "high" || got["effectivePriorityName"] != "high" || got["effectivePreemptibility"] != "preemptible" {
		t.Errorf("PUT answered %v", got)
	}
	again := getJSON(t, srv, "/api/v1/workload-types/"+pytorch["id"].(string))
	if again["effectivePriorityName"] != "high" {
		t.Errorf("GET after PUT shows %v", again["effectivePriorityName"])
	}
}

func TestListFiltersAndSorting(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	names := func(path string) []string {
		var out []string
		for _, x := range items(getJSON(t, srv, path), "types") {
			out = append(out, x["name"].(string))
		}
		return out
	}
	if got := names("/api/v1/workload-types?filterBy=name==Job"); len(got) != 1 || got[0] != "Job" {
		t.Errorf("filterBy=name==Job gave %v", got)
	}
	if got := names("/api/v1/workload-types?externalTypesOnly=true"); len(got) != 30 {
		t.Errorf("externalTypesOnly gave %d types", len(got))
	}
	if got := names("/api/v1/workload-types?filterBy=name=@job,group==kubeflow.org&sortBy=name"); strings.Join(got, ",") != "JAXJob,MPIJob,PyTorchJob,TFJob,XGBoostJob" {
		t.Errorf("contains + group gave %v", got)
	}
	if got := names("/api/v1/workload-types?filterBy=name=^Ray&sortBy=name&sortOrder=desc"); strings.Join(got, ",") != "RayService,RayJob,RayCluster" {
		t.Errorf("starts-with, sorted descending, gave %v", got)
	}
	if got := names("/api/v1/workload-types?filterBy=name=$Set"); strings.Join(got, ",") != "LeaderWorkerSet,ReplicaSet,StatefulSet" {
		t.Errorf("ends-with gave %v", got)
	}
	if got := names("/api/v1/workload-types?filterBy=categoryName!=Deploy,categoryName!=Train,categoryName!=Build"); strings.Join(got, ",") != "SPOTRequest" {
		t.Errorf("!= keeps the type without category: %v", got)
	}
	if got := names("/api/v1/workload-types?filterBy=group==batch,name!@cron"); strings.Join(got, ",") != "Job" {
		t.Errorf("not-contains gave %v", got)
	}
	if got := names("/api/v1/workload-types?search=inference&externalTypesOnly=false"); len(got) != 5 {
		t.Errorf("search=inference gave %v", got)
	}
	var values []float64
	for _, p := range items(getJSON(t, srv, "/api/v1/workload-priorities?filterBy=value>=65,value<=125&sortBy=value&sortOrder=desc"), "priorities") {
		values = append(values, p["value"].(float64))
	}
	if len(values) != 4 || values[0] != 125 || values[3] != 65 {
		t.Errorf("priorities between 65 and 125, descending: %v", values)
	}
}

// TestErrors checks every status of docs/api.md "Errors" on these routes, each with the
// envelope and a sentence that names what is wrong.
func TestErrors(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	job := store.SeedID("workload-type", "batch/Job").String()
	missing := "19fbd4e8-68ab-5c2c-8d95-d57e189f3180"
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		mentions                              string
	}{
		{"priorityId that does not exist", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"priorityId":"` + missing + `"}`, 400, missing},
		{"malformed UUID in the path", "PUT", "/api/v1/workload-types/not-a-uuid", "application/json", `{}`, 400, "not-a-uuid"},
		{"malformed UUID in the body", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"priorityId":"xyz"}`, 400, "priorityId"},
		{"unknown type id", "GET", "/api/v1/workload-types/" + missing, "", "", 404, missing},
		{"unknown type id on PUT", "PUT", "/api/v1/workload-types/" + missing, "application/json", `{}`, 404, missing},
		{"unknown JSON field", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"priority":"high"}`, 400, `"priority"`},
		{"wrong JSON type", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"priorityId":7}`, 400, "priorityId"},
		{"body not JSON", "PUT", "/api/v1/workload-types/" + job, "application/json", `priority=high`, 400, "not valid JSON"},
		{"body not declared JSON", "PUT", "/api/v1/workload-types/" + job, "text/plain", `{}`, 415, "Content-Type"},
		{"empty body", "PUT", "/api/v1/workload-types/" + job, "application/json", ``, 400, "empty"},
		{"two JSON values", "PUT", "/api/v1/workload-types/" + job, "application/json", `{}{}`, 400, "more than one"},
		{"bad preemptibility", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"preemptibility":"maybe"}`, 400, "maybe"},
		{"body over 1 MiB", "PUT", "/api/v1/workload-types/" + job, "application/json", `{"x":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "1 MiB"},
		{"wrong method", "DELETE", "/api/v1/workload-types/" + job, "", "", 405, "method"},
		{"unknown route", "GET", "/api/v1/nothing-here", "", "", 404, "no such"},
		{"unknown filter field", "GET", "/api/v1/workload-types?filterBy=colour==red", "", "", 400, "colour"},
		{"unknown filter operator", "GET", "/api/v1/workload-types?filterBy=name~Job", "", "", 400, "operator"},
		{"contains on a number", "GET", "/api/v1/workload-priorities?filterBy=value=@2", "", "", 400, "value"},
		{"not a number", "GET", "/api/v1/workload-priorities?filterBy=value>=lots", "", "", 400, "lots"},
		{"unknown sort field", "GET", "/api/v1/workload-types?sortBy=colour", "", "", 400, "colour"},
		{"bad sort order", "GET", "/api/v1/workload-types?sortOrder=up", "", "", 400, "up"},
		{"bad boolean", "GET", "/api/v1/workload-types?externalTypesOnly=maybe", "", "", 400, "externalTypesOnly"},
		{"bad limit", "GET", "/api/v1/workload-priorities?limit=501", "", "", 400, "limit"},
		{"bad offset", "GET", "/api/v1/workload-priorities?offset=-1", "", "", 400, "offset"},
		{"null category default", "PUT", "/api/v1/workload-categories/" + store.SeedID("category", "Train").String(), "application/json", `{"defaultPriorityId":null}`, 400, "null"},
		{"unknown category", "GET", "/api/v1/workload-categories/" + missing, "", "", 404, missing},
		{"unknown priority", "GET", "/api/v1/workload-priorities/" + missing, "", "", 404, missing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, srv, tc.method, tc.path, tc.contentType, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			e := r.json(t)
			if e["code"] != float64(tc.status) {
				t.Errorf("envelope code %v, want %d", e["code"], tc.status)
			}
			msg, _ := e["message"].(string)
			if !strings.Contains(msg, tc.mentions) {
				t.Errorf("message %q does not mention %q", msg, tc.mentions)
			}
			if strings.Contains(msg, "SQLSTATE") || strings.Contains(msg, "goroutine") {
				t.Errorf("message leaks internals: %q", msg)
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
}

func TestNullReturnsTypeToCategoryDefault(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	notebook := "/api/v1/workload-types/" + store.SeedID("workload-type", "kubeflow.org/Notebook").String()
	r := do(t, srv, "PUT", notebook, "application/json", `{"preemptibility":"preemptible","priorityId":"`+store.SeedID("priority", "very-low").String()+`"}`)
	if got := r.json(t); got["effectivePreemptibility"] != "preemptible" || got["effectivePriorityName"] != "very-low" {
		t.Fatalf("override gave %v", got)
	}
	// Absent fields stay as they are; null returns only that field to the category's default.
	r = do(t, srv, "PUT", notebook, "application/json", `{"preemptibility":null}`)
	got := r.json(t)
	if got["preemptibility"] != nil || got["effectivePreemptibility"] != "non-preemptible" {
		t.Errorf("preemptibility null gave %v / %v, want null / Build's non-preemptible", got["preemptibility"], got["effectivePreemptibility"])
	}
	if got["priorityName"] != "very-low" {
		t.Errorf("absent priorityId changed the priority to %v", got["priorityName"])
	}
}

func TestChangesAreAudited(t *testing.T) {
	t.Parallel()
	srv, st := newAPI(t)
	job := "/api/v1/workload-types/" + store.SeedID("workload-type", "batch/Job").String()
	do(t, srv, "PUT", job, "application/json", `{"preemptibility":"preemptible"}`)
	do(t, srv, "PUT", job, "application/json", `{"preemptibility":"sometimes"}`)
	entries := auditRows(t, st, "workload-type")
	if len(entries) != 2 {
		t.Fatalf("want 2 audit rows (the change and the refused attempt), got %d", len(entries))
	}
	refused, done := entries[0], entries[1]
	if done.Result != "success" || done.EntityName != "Job" || done.HTTPMethod != "PUT" || done.RequestID == "" || done.Changes["preemptibility"] == nil {
		t.Errorf("success row = %+v", done)
	}
	if refused.Result != "failure" || refused.HTTPStatus != 400 || refused.EntityType != "workload-type" {
		t.Errorf("refused row = %+v", refused)
	}
}

func TestDatabaseDownIs503(t *testing.T) {
	t.Parallel()
	// A pool pointed at a port nobody listens on: every query fails to connect.
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool)
	srv := httptest.NewServer(web.New(deps(st)))
	defer srv.Close()
	// A well-formed key: checking it needs the database, which is down.
	signIn(srv, "arb_00000000000000000000000000000000_secret")
	for _, path := range []string{"/api/v1/workload-types", "/api/v1/workload-priorities", "/readyz"} {
		r := do(t, srv, "GET", path, "", "")
		if r.status != 503 {
			t.Errorf("GET %s = %d, want 503: %s", path, r.status, r.body)
		}
	}
	r := do(t, srv, "GET", "/workload-types", "", "")
	if r.status != 503 || !strings.Contains(string(r.body), "database is unavailable") {
		t.Errorf("the page says %d: %.200s", r.status, r.body)
	}
	if r := do(t, srv, "GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("healthz = %d while the database is down; the process is up", r.status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	r := do(t, srv, "GET", "/workload-types", "", "")
	if r.status != 200 {
		t.Fatalf("page = %d", r.status)
	}
	for h, want := range map[string]string{
		"Content-Security-Policy": "script-src 'self'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
		"X-Frame-Options":         "DENY",
	} {
		if !strings.Contains(r.header.Get(h), want) {
			t.Errorf("%s = %q, want it to contain %q", h, r.header.Get(h), want)
		}
	}
	if strings.Contains(string(r.body), "<script>") || strings.Contains(string(r.body), "style=") {
		t.Error("the page has inline script or style, which the CSP forbids")
	}
}
