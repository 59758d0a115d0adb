package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"golang.org/x/net/html"
)

// A workload belongs to its project by id, not by name: after its project is renamed (or
// deleted) and another department makes a project with the old name, that department's admin
// reads nothing of the old workload and changes nothing of it, on every workload route and
// page, while the renamed project's own members still see it.
func TestWorkloadsBelongToTheirProjectByID(t *testing.T) {
	t.Parallel()
	f := newSubmitAPI(t)
	admin := tokenOf(f.srv)
	ctx := context.Background()
	rita := newAPIKey(t, f.st, "researcher", "project", f.alpha)
	researchAdmin := newAPIKey(t, f.st, "department-admin", "department", f.dept)

	r := f.submit(t, rita, "trainings", fmt.Sprintf(`{"name":"old-run","projectId":%q,"spec":{"image":"python:3.12"}}`, f.alpha))
	if r.status != 202 {
		t.Fatalf("POST trainings = %d %s", r.status, r.body)
	}
	old := decode[views.SubmittedWorkload](t, r.body).ID
	// A scheduling event of it, for the Event history.
	if err := f.st.RecordWorkloads(ctx, nil, []store.WorkloadEvent{{WorkloadUID: old, Kind: "Preempted", Reason: "S16",
		Message: "Preempted by team-alpha/other under S16 (a higher-priority workload of the same project); 1 GPU freed; exit code 3006"}}); err != nil {
		t.Fatal(err)
	}

	// alpha is renamed; another department makes a project named alpha, with an admin.
	send(t, f.srv, "PUT", "/api/v1/org-unit/projects/"+f.alpha, `{"name":"alpha-renamed"}`, 200)
	ops := create(t, f.srv, "/api/v1/org-unit/departments", `{"name":"ops"}`)
	create(t, f.srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"alpha","departmentId":%q}`, ops))
	opsAdmin := newAPIKey(t, f.st, "department-admin", "department", ops)

	t.Run("the new alpha's department admin sees nothing of it", func(t *testing.T) {
		refusedAsMissing(t, f, opsAdmin, old, "old-run")
		if n := len(f.cluster.deleted) + len(f.cluster.suspended); n != 0 {
			t.Errorf("refused actions reached the cluster %d times", n)
		}
	})
	for who, token := range map[string]string{"the renamed project's researcher": rita, "its department's admin": researchAdmin, "an admin": admin} {
		t.Run(who+" still sees it", func(t *testing.T) {
			seesWorkload(t, f, token, old, "old-run")
		})
	}

	// It keeps the name it was recorded under (until the scheduler records it again); its
	// project's id finds it whatever the name.
	if got := workloadNames(workloadsAs(t, f, rita, "?filterBy=projectId=="+f.alpha)); got != "old-run" {
		t.Errorf("filterBy=projectId==<alpha's id> lists %q, want old-run", got)
	}
	if w := workloadsAs(t, f, rita, "?filterBy=projectName==alpha"); len(w) != 1 || w[0].ProjectName != "alpha" || w[0].ProjectID == nil || *w[0].ProjectID != f.alpha {
		t.Errorf("filterBy=projectName==alpha lists %+v, want old-run recorded as alpha with alpha's id", w)
	}

	// Deleted, and its name made again elsewhere: the new project inherits nothing either. Its
	// workloads are then the admins' only (they belong to no project there is).
	gone := f.submitTo(t, admin, f.beta, "beta-run")
	send(t, f.srv, "DELETE", "/api/v1/org-unit/projects/"+f.beta, "", 204)
	create(t, f.srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":"beta","departmentId":%q}`, ops))
	t.Run("a deleted project's workloads go to no one with its old name", func(t *testing.T) {
		refusedAsMissing(t, f, opsAdmin, gone, "beta-run")
		refusedAsMissing(t, f, researchAdmin, gone, "beta-run")
		seesWorkload(t, f, admin, gone, "beta-run")
	})
}

// submitTo submits a training named name to project as token, and returns its id.
func (f *submitFixture) submitTo(t *testing.T, token, project, name string) string {
	t.Helper()
	r := f.submit(t, token, "trainings", fmt.Sprintf(`{"name":%q,"projectId":%q,"spec":{"image":"python:3.12"}}`, name, project))
	if r.status != 202 {
		t.Fatalf("POST trainings = %d %s", r.status, r.body)
	}
	return decode[views.SubmittedWorkload](t, r.body).ID
}

// refusedAsMissing checks that every workload route and page answers workload id (named name) to token as
// if it did not exist, and that no list, export or history shows it.
func refusedAsMissing(t *testing.T, f *submitFixture, token, id, name string) {
	t.Helper()
	for _, rc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/workloads/" + id, ""},
		{"GET", "/api/v1/workloads/" + id + "/events", ""},
		{"GET", "/api/v1/workloads/" + id + "/pods", ""},
		{"GET", "/api/v1/workloads/" + id + "/history", ""},
		{"PATCH", "/api/v1/workloads/" + id, `{"priority":"high"}`},
		{"PATCH", "/api/v1/workloads/" + id + "?dryRun=true", `{"preemptibility":"non-preemptible"}`},
		{"GET", "/api/v1/workloads/trainings/" + id, ""},
		{"DELETE", "/api/v1/workloads/trainings/" + id, ""},
		{"POST", "/api/v1/workloads/trainings/" + id + "/suspend", ""},
		{"POST", "/api/v1/workloads/trainings/" + id + "/resume", ""},
	} {
		if r := doAs(t, f.srv, token, rc.method, rc.path, "application/json", rc.body); r.status != 404 {
			t.Errorf("%s %s = %d %.300s, want 404", rc.method, rc.path, r.status, r.body)
		}
	}
	for _, path := range []string{"/workloads/" + id, "/submit?clone=" + id} {
		if r := doAs(t, f.srv, token, "GET", path, "", ""); r.status != 404 {
			t.Errorf("GET %s = %d, want 404", path, r.status)
		}
	}
	for _, post := range []struct{ path, form string }{
		{"/workloads/" + id + "/stop", ""}, {"/workloads/" + id + "/run", ""}, {"/workloads/" + id + "/delete", ""},
		{"/workloads/" + id, "priority=high"}, // the Workloads page's inline change
	} {
		if r := doAs(t, f.srv, token, "POST", post.path, "application/x-www-form-urlencoded", post.form); r.status != 404 {
			t.Errorf("POST %s = %d, want 404", post.path, r.status)
		}
	}

	for _, query := range []string{"", "?deleted=true"} {
		if got := workloadNames(workloadsAs(t, f, token, query)); strings.Contains(got, name) {
			t.Errorf("GET /api/v1/workloads%s lists %s", query, got)
		}
		if doc := pageAs(t, f.srv, token, "/workloads"+query, nil, false, 200); findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "wl-"+id }) != nil {
			t.Errorf("the Workloads page%s shows it", query)
		}
		if csv := csvAs(t, f, token, "/workloads.csv"+query); strings.Contains(csv, id) {
			t.Errorf("/workloads.csv%s has it:\n%s", query, csv)
		}
	}
	doc := pageAs(t, f.srv, token, "/workloads/bulk", url.Values{"id": {id}, "priority": {"high"}}, false, 200)
	if got := words(doc); !strings.Contains(got, "not found — workload "+id+" was not found") {
		t.Errorf("a bulk change of it by id: %q", got)
	}
	// All it may see: others only, or nothing (a 400 then says nothing was selected).
	status, outcome := bulkAll(t, f, token)
	if status != 200 && !strings.Contains(outcome, "Select workloads, or all matching the filter.") || strings.Contains(outcome, name+": ") {
		t.Errorf("a bulk change of all it may see = %d, reaching %s: %q", status, name, outcome)
	}
	if rows := words(byID(page(t, f.srv, token, "/event-history?tab=scheduling", 200), "scheduling-table")); strings.Contains(rows, name) {
		t.Errorf("the Event history shows its events: %q", rows)
	}
}

// seesWorkload checks that token reads workload id, named name, in the API, its pages, the
// export and the Event history.
func seesWorkload(t *testing.T, f *submitFixture, token, id, name string) {
	t.Helper()
	for _, path := range []string{"/api/v1/workloads/" + id, "/api/v1/workloads/" + id + "/events", "/api/v1/workloads/" + id + "/pods",
		"/api/v1/workloads/" + id + "/history", "/api/v1/workloads/trainings/" + id, "/workloads/" + id} {
		if r := doAs(t, f.srv, token, "GET", path, "", ""); r.status != 200 {
			t.Errorf("GET %s = %d %.300s, want 200", path, r.status, r.body)
		}
	}
	if got := workloadNames(workloadsAs(t, f, token, "")); !strings.Contains(got, name) {
		t.Errorf("GET /api/v1/workloads lists %q, not %s", got, name)
	}
	if doc := pageAs(t, f.srv, token, "/workloads", nil, false, 200); findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "wl-"+id }) == nil {
		t.Errorf("the Workloads page does not show %s", name)
	}
	if csv := csvAs(t, f, token, "/workloads.csv"); !strings.Contains(csv, id) {
		t.Errorf("/workloads.csv does not have %s:\n%s", name, csv)
	}
	if name == "old-run" { // the one with a scheduling event
		if rows := words(byID(page(t, f.srv, token, "/event-history?tab=scheduling", 200), "scheduling-table")); !strings.Contains(rows, name) {
			t.Errorf("the Event history does not show its event: %q", rows)
		}
	}
}

// workloadsAs lists GET /api/v1/workloads with query as token.
func workloadsAs(t *testing.T, f *submitFixture, token, query string) []views.Workload {
	t.Helper()
	r := doAs(t, f.srv, token, "GET", "/api/v1/workloads"+query, "", "")
	if r.status != 200 {
		t.Fatalf("GET /api/v1/workloads%s = %d %.300s", query, r.status, r.body)
	}
	return decodeList[views.Workload](t, r.body, "workloads").Items
}

// bulkAll posts a bulk change of every workload token may see (the Workloads page's "all
// matching the filter", no filter) and returns the status and the words of the page it ends
// on, with the outcome of each.
func bulkAll(t *testing.T, f *submitFixture, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", f.srv.URL+"/workloads/bulk", strings.NewReader(url.Values{"all": {"true"}, "priority": {"high"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := pageClient(f.srv).Do(req) // it keeps the flash the redirect after the change reads
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := html.Parse(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, words(doc)
}

// csvAs downloads an export as token.
func csvAs(t *testing.T, f *submitFixture, token, path string) string {
	t.Helper()
	req, err := http.NewRequest("GET", f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %d %.300s", path, res.StatusCode, b)
	}
	return string(b)
}
