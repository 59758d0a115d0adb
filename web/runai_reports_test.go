package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/go-cmp/cmp"
)

// report is Run:ai's Report as the tests read it.
type report struct {
	Name            string    `json:"name"`
	Description     string    `json:"description"`
	Start           time.Time `json:"start"`
	End             time.Time `json:"end"`
	GroupBy         *string   `json:"groupBy"`
	FilterBy        []string  `json:"filterBy"`
	ID              string    `json:"id"`
	CreatedAt       time.Time `json:"createdAt"`
	CreatedBy       string    `json:"createdBy"`
	TenantID        int       `json:"tenantId"`
	Status          string    `json:"status"`
	StatusUpdatedAt time.Time `json:"statusUpdatedAt"`
	StatusMessage   string    `json:"statusMessage"`
}

// reportBody is a report request over the history's day.
func reportBody(name, groupBy string, filters ...string) string {
	g := "null"
	if groupBy != "" {
		g = fmt.Sprintf("%q", groupBy)
	}
	f := "[]"
	if len(filters) > 0 {
		f = `["` + strings.Join(filters, `","`) + `"]`
	}
	return fmt.Sprintf(`{"name":%q,"start":"2026-11-02T00:00:00Z","end":"2026-11-03T00:00:00Z","groupBy":%s,"filterBy":%s}`, name, g, f)
}

// A report is made Ready in the request that creates it; its file is the history's GPU-hours
// per day and group; it is listed, counted, read and deleted.
func TestConsumptionReportIsTheHistorysGPUHoursPerDay(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	made := sendAs[report](t, w.srv, "POST", "/api/v1/org-unit/reports", reportBody("November by department", "Department"), 202)
	if made.Status != "Ready" || made.TenantID != 1 || made.CreatedBy == "" || made.ID == "" {
		t.Errorf("the new report = %+v, want it Ready, in tenant 1, with its maker and id", made)
	}
	file := do(t, w.srv, "GET", "/api/v1/org-unit/reports/"+made.ID+"/file", "", "")
	if file.status != 200 || !strings.HasPrefix(file.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(file.header.Get("Content-Disposition"), "November-by-department.csv") {
		t.Fatalf("the file = %d %v", file.status, file.header)
	}
	rows := map[string]string{
		w.dept["A"]: "2026-11-02," + w.dept["A"] + ",dept-a,6,4,1,8,0,1,0,0",
		w.dept["B"]: "2026-11-02," + w.dept["B"] + ",dept-b,6,0,6,4,0,0,1,0",
	}
	first, second := w.dept["A"], w.dept["B"]
	if second < first {
		first, second = second, first
	}
	want := "date,departmentId,department,allocatedGpuHours,nonPreemptibleGpuHours,borrowedGpuHours,deservedGpuHours,fairShareGpuHours,pendingGpuHours,preemptions,reclaims\n" +
		rows[first] + "\n" + rows[second] + "\n"
	if d := cmp.Diff(want, string(file.body)); d != "" {
		t.Errorf("the report by department (-want +got):\n%s", d)
	}

	// One project's rows, by project.
	one := sendAs[report](t, w.srv, "POST", "/api/v1/org-unit/reports", reportBody("alpha-one", "Project", "projectName==alpha-one"), 202)
	got := string(do(t, w.srv, "GET", "/api/v1/org-unit/reports/"+one.ID+"/file", "", "").body)
	wantOne := "date,departmentId,department,projectId,project,allocatedGpuHours,nonPreemptibleGpuHours,borrowedGpuHours,deservedGpuHours,fairShareGpuHours,pendingGpuHours,preemptions,reclaims\n" +
		"2026-11-02," + w.dept["A"] + ",dept-a," + w.proj["A1"] + ",alpha-one,4,2,1,4,0,1,0,0\n"
	if d := cmp.Diff(wantOne, got); d != "" {
		t.Errorf("the report of alpha-one (-want +got):\n%s", d)
	}

	if d := cmp.Diff(made, sendAs[report](t, w.srv, "GET", "/api/v1/org-unit/reports/"+made.ID, "", 200)); d != "" {
		t.Errorf("the report read back (-made +read):\n%s", d)
	}
	list := decode[struct{ Reports []report }](t, send(t, w.srv, "GET", "/api/v1/org-unit/reports?sortBy=name&filterBy=name=@alpha", "", 200).body)
	if len(list.Reports) != 1 || list.Reports[0].ID != one.ID {
		t.Errorf("the reports named like alpha = %+v, want alpha-one alone", list.Reports)
	}
	if n := decode[struct{ Count int }](t, send(t, w.srv, "GET", "/api/v1/org-unit/reports/count", "", 200).body); n.Count != 2 {
		t.Errorf("count = %d, want 2", n.Count)
	}
	if a := decode[struct{ IsAvailable bool }](t, send(t, w.srv, "GET", "/api/v1/org-unit/reports/availability", "", 200).body); !a.IsAvailable {
		t.Error("reports say they are not available")
	}
	send(t, w.srv, "DELETE", "/api/v1/org-unit/reports/"+made.ID, "", 204)
	for _, path := range []string{"/api/v1/org-unit/reports/" + made.ID, "/api/v1/org-unit/reports/" + made.ID + "/file"} {
		if r := do(t, w.srv, "GET", path, "", ""); r.status != 404 || !strings.Contains(r.refusal(t).Message, made.ID) {
			t.Errorf("GET %s after the delete = %d %s, want 404 naming it", path, r.status, r.body)
		}
	}
	if r := do(t, w.srv, "DELETE", "/api/v1/org-unit/reports/"+made.ID, "", ""); r.status != 404 {
		t.Errorf("a second delete = %d %s, want 404", r.status, r.body)
	}
}

// Bad requests are refused naming the field, and nothing is kept.
func TestConsumptionReportRefusesBadRequestsNamingTheField(t *testing.T) {
	t.Parallel()
	w := newUsageWorld(t)
	cases := []struct{ body, names string }{
		{`{"start":"2026-11-02T00:00:00Z","end":"2026-11-03T00:00:00Z"}`, "name is required"},
		{`{"name":"r","start":"2026-11-03T00:00:00Z","end":"2026-11-02T00:00:00Z"}`, "end"},
		{`{"name":"r","start":"2024-11-03T00:00:00Z","end":"2026-11-02T00:00:00Z"}`, "366 days"},
		{`{"name":"r","start":"November","end":"2026-11-02T00:00:00Z"}`, "start"},
		{`{"name":"r","end":"2026-11-02T00:00:00Z"}`, "start is required"},
		{reportBody("r", "Category"), "groupBy"},
		{reportBody("r", "", "owner==me"), "filterBy"},
		{reportBody("r", "", "projectName==nobody"), "nobody"},
		{reportBody("r", "", "departmentName==nowhere"), "nowhere"},
		{reportBody("r", "", "clusterId==6723b9d7-73d1-5e4c-a494-d8fdeddc541c"), "another cluster"},
		{`{"name":"r","start":"2026-11-02T00:00:00Z","end":"2026-11-03T00:00:00Z","period":"month"}`, "period"},
	}
	for _, c := range cases {
		r := do(t, w.srv, "POST", "/api/v1/org-unit/reports", "application/json", c.body)
		if r.status != 400 || !strings.Contains(r.refusal(t).Message, c.names) {
			t.Errorf("POST %s = %d %s, want 400 naming %q", c.body, r.status, r.body, c.names)
		}
	}
	if n := decode[struct{ Count int }](t, send(t, w.srv, "GET", "/api/v1/org-unit/reports/count", "", 200).body); n.Count != 0 {
		t.Errorf("%d reports were kept from refused requests", n.Count)
	}
	for _, path := range []string{"/api/v1/org-unit/reports/not-an-id", "/api/v1/org-unit/reports?sortBy=owner", "/api/v1/org-unit/reports?filterBy=owner==me"} {
		if r := do(t, w.srv, "GET", path, "", ""); r.status != 400 {
			t.Errorf("GET %s = %d %s, want 400", path, r.status, r.body)
		}
	}
	if r := do(t, w.srv, "GET", "/api/v1/org-unit/reports/6723b9d7-73d1-5e4c-a494-d8fdeddc541c", "", ""); r.status != 404 {
		t.Errorf("an unknown report = %d %s, want 404", r.status, r.body)
	}
}

// A report reaching back past the daily rows' retention is refused naming start: the days it
// would sum are gone.
func TestConsumptionReportRefusesAPeriodPastTheRetention(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.UsageRetention = store.UsageRetention{Raw: 48 * time.Hour, Hourly: 90 * 24 * time.Hour, Daily: 400 * 24 * time.Hour}
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	start := time.Now().UTC().Add(-500 * 24 * time.Hour)
	body := fmt.Sprintf(`{"name":"old","start":%q,"end":%q}`, start.Format(time.RFC3339), start.Add(10*24*time.Hour).Format(time.RFC3339))
	r := do(t, srv, "POST", "/api/v1/org-unit/reports", "application/json", body)
	if msg := r.refusal(t).Message; r.status != 400 || !strings.Contains(msg, "start") || !strings.Contains(msg, "daily rows, which are kept 400 days") {
		t.Errorf("a report from 500 days ago = %d %s, want 400 naming start and the daily rows' retention", r.status, r.body)
	}
	recent := fmt.Sprintf(`{"name":"recent","start":%q,"end":%q}`, start.Add(200*24*time.Hour).Format(time.RFC3339), start.Add(210*24*time.Hour).Format(time.RFC3339))
	send(t, srv, "POST", "/api/v1/org-unit/reports", recent, 202)
}
