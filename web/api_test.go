package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"k8s.io/utils/ptr"
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

// response is an answer: decode it with decode, decodeList or refusal (answers_test.go).
type response struct {
	status int
	header http.Header
	body   []byte
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

// TestRunAIProcedure follows Run:ai's "Updating the Default Mapping" steps with the API.
func TestRunAIProcedure(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	types := list[views.WorkloadTypeAnswer](t, srv, "/api/v1/workload-types", "types")
	if len(types) != 37 {
		t.Fatalf("got %d workload types, want 37", len(types))
	}
	pytorch := named(t, types, "PyTorchJob", func(w views.WorkloadTypeAnswer) string { return w.Name })
	train := store.SeedID("category", "Train").String()
	want := views.WorkloadTypeAnswer{WorkloadType: views.WorkloadType{ID: store.SeedID("workload-type", "kubeflow.org/PyTorchJob").String(), Name: "PyTorchJob", Group: "kubeflow.org",
		External: true, CategoryID: &train, CategoryName: ptr.To("Train"), EffectivePriorityName: "low", EffectivePreemptibility: "preemptible", GangPolicy: "replica-specs"},
		// Run:ai answers the priority that applies (Train's default) with no own priority set.
		PriorityID: store.SeedID("priority", "low").String(), PriorityName: "low"}
	if diff := cmp.Diff(want, pytorch, stamps); diff != "" {
		t.Fatalf("PyTorchJob (-want +got):\n%s", diff)
	}
	high := named(t, list[views.Priority](t, srv, "/api/v1/workload-priorities", "priorities"), "high", func(p views.Priority) string { return p.Name })
	wantHigh := views.Priority{ID: store.SeedID("priority", "high").String(), Name: "high", Value: 125, Source: "arbiter", ClusterStatus: "Unknown"}
	if diff := cmp.Diff(wantHigh, high, stamps); diff != "" {
		t.Fatalf("priority high (-want +got):\n%s", diff)
	}
	got := sendAs[views.WorkloadTypeAnswer](t, srv, "PUT", "/api/v1/workload-types/"+pytorch.ID, `{"priorityId":"`+high.ID+`"}`, 200)
	want.PriorityID, want.PriorityName, want.EffectivePriorityName = high.ID, "high", "high"
	want.OwnPriorityID, want.OwnPriorityName = &high.ID, ptr.To("high")
	if diff := cmp.Diff(want, got, stamps); diff != "" {
		t.Errorf("PUT answered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, getAs[views.WorkloadTypeAnswer](t, srv, "/api/v1/workload-types/"+pytorch.ID), stamps); diff != "" {
		t.Errorf("GET after PUT (-want +got):\n%s", diff)
	}
}

func TestListFiltersAndSorting(t *testing.T) {
	t.Parallel()
	srv, _ := newAPI(t)
	for query, want := range map[string]string{
		"filterBy=name==Job": "Job",
		"filterBy=name=@job,group==kubeflow.org&sortBy=name":                    "JAXJob,MPIJob,PyTorchJob,TFJob,XGBoostJob",
		"filterBy=name=^Ray&sortBy=name&sortOrder=desc":                         "RayService,RayJob,RayCluster",
		"filterBy=name=$Set":                                                    "LeaderWorkerSet,ReplicaSet,StatefulSet",
		"filterBy=categoryName!=Deploy,categoryName!=Train,categoryName!=Build": "SPOTRequest", // != keeps the type without category
		"filterBy=group==batch,name!@cron":                                      "Job",
	} {
		types := list[views.WorkloadTypeAnswer](t, srv, "/api/v1/workload-types?"+query, "types")
		if got := namesOf(types, func(w views.WorkloadTypeAnswer) string { return w.Name }); got != want {
			t.Errorf("%s gave %s, want %s", query, got, want)
		}
	}
	for query, want := range map[string]int{"externalTypesOnly=true": 30, "search=inference&externalTypesOnly=false": 5} {
		if got := list[views.WorkloadTypeAnswer](t, srv, "/api/v1/workload-types?"+query, "types"); len(got) != want {
			t.Errorf("%s gave %d types, want %d", query, len(got), want)
		}
	}
	var values []int
	for _, p := range list[views.Priority](t, srv, "/api/v1/workload-priorities?filterBy=value>=65,value<=125&sortBy=value&sortOrder=desc", "priorities") {
		values = append(values, p.Value)
	}
	if diff := cmp.Diff([]int{125, 90, 80, 65}, values); diff != "" {
		t.Errorf("priorities between 65 and 125, descending (-want +got):\n%s", diff)
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
			e := r.refusal(t)
			if e.Code != tc.status {
				t.Errorf("envelope code %d, want %d", e.Code, tc.status)
			}
			msg := e.Message
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
	veryLow := store.SeedID("priority", "very-low").String()
	want := getAs[views.WorkloadTypeAnswer](t, srv, notebook)
	got := sendAs[views.WorkloadTypeAnswer](t, srv, "PUT", notebook, `{"preemptibility":"preemptible","priorityId":"`+veryLow+`"}`, 200)
	want.Preemptibility, want.EffectivePreemptibility = ptr.To("preemptible"), "preemptible"
	want.PriorityID, want.PriorityName, want.EffectivePriorityName = veryLow, "very-low", "very-low"
	want.OwnPriorityID, want.OwnPriorityName = &veryLow, ptr.To("very-low")
	if diff := cmp.Diff(want, got, stamps); diff != "" {
		t.Fatalf("override (-want +got):\n%s", diff)
	}
	// Absent fields stay as they are; null returns only that field to the category's default
	// (Build's non-preemptible).
	got = sendAs[views.WorkloadTypeAnswer](t, srv, "PUT", notebook, `{"preemptibility":null}`, 200)
	want.Preemptibility, want.EffectivePreemptibility = nil, "non-preemptible"
	if diff := cmp.Diff(want, got, stamps); diff != "" {
		t.Errorf("preemptibility null (-want +got):\n%s", diff)
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
