package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// usageOrg is an organization with recorded usage: department research (projects alpha and
// beta) and department ops (project gamma), all in node pool default (16 GPUs), recorded
// every 10 minutes for the last two hours.
type usageOrg struct {
	srv                        *httptest.Server
	st                         *store.Store
	research, ops              string
	alpha, beta, gamma         string
	alphaGPUs, betaGPUs, gGPUs float64
}

func newUsageOrg(t *testing.T) usageOrg {
	t.Helper()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Usage = st
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	signIn(srv, newAPIKey(t, st, "admin", "system", ""))
	o := usageOrg{srv: srv, st: st, alphaGPUs: 4, betaGPUs: 6, gGPUs: 3}
	o.research = create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":12}}]}`)
	o.ops = create(t, srv, "/api/v1/org-unit/departments", `{"name":"ops","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4}}]}`)
	project := func(name, dept string) string {
		return create(t, srv, "/api/v1/org-unit/projects", fmt.Sprintf(`{"name":%q,"departmentId":%q,"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4}}]}`, name, dept))
	}
	o.alpha, o.beta, o.gamma = project("alpha", o.research), project("beta", o.research), project("gamma", o.ops)
	usage := func(project, dept string, preemptible, borrowed float64) store.ProjectUsage {
		return store.ProjectUsage{ProjectID: uuid.MustParse(project), DepartmentID: uuid.MustParse(dept),
			NonPreemptible: 1, Preemptible: preemptible - 1, Borrowed: borrowed, Deserved: 4, FairShare: 4}
	}
	now := time.Now().UTC().Truncate(10 * time.Minute)
	for at := now.Add(-2 * time.Hour); at.Before(now); at = at.Add(10 * time.Minute) {
		sample := store.UsageSample{At: at, Interval: 10 * time.Minute, Pools: []store.PoolUsage{{NodePool: "default", CapacityGPUs: 16,
			Projects: []store.ProjectUsage{usage(o.alpha, o.research, 4, 0), usage(o.beta, o.research, 4, 2), usage(o.gamma, o.ops, 3, 0)}}}}
		if _, err := st.RecordUsageSample(context.Background(), sample); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// seriesTotals are each series' largest value, by label, over every chart of an answer.
func seriesTotals(t *testing.T, body []byte) map[string]float64 {
	t.Helper()
	var charts views.UsageCharts
	if err := json.Unmarshal(body, &charts); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := map[string]float64{}
	for _, c := range charts.Charts {
		for _, s := range c.Series {
			for _, v := range s.Values {
				if v != nil {
					out[s.Label] = max(out[s.Label], *v)
				}
			}
		}
	}
	return out
}

// TestUsageChartsShowOnlyTheProjectsTheCallerMayRead: the Overview's charts stack only the
// projects the caller may read (by project and by department, so a department's band is the
// sum of its readable projects), under the pools' capacity, which everyone sees; a project's
// or a department's charts are a 404 to a caller who may not read it, as its page is.
func TestUsageChartsShowOnlyTheProjectsTheCallerMayRead(t *testing.T) {
	t.Parallel()
	o := newUsageOrg(t)
	alphaViewer := newAPIKey(t, o.st, "viewer", "project", o.alpha)
	researchViewer := newAPIKey(t, o.st, "viewer", "department", o.research)
	nobody := newAPIKey(t, o.st, "viewer", "project", uuid.NewString()) // a grant on no project
	as := func(token, path string) response {
		t.Helper()
		return doAs(t, o.srv, token, "GET", path, "", "")
	}
	ok := func(token, path string) map[string]float64 {
		t.Helper()
		r := as(token, path)
		if r.status != 200 {
			t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
		}
		return seriesTotals(t, r.body)
	}
	admin := tokenOf(o.srv)
	for _, tc := range []struct {
		who, token, path string
		want             map[string]float64
	}{
		{"admin", admin, "/console/usage/pools?by=project", map[string]float64{"alpha": 4, "beta": 6, "gamma": 3, "Capacity": 16}},
		{"admin", admin, "/console/usage/pools?by=department", map[string]float64{"research": 10, "ops": 3, "Capacity": 16}},
		{"alpha's viewer", alphaViewer, "/console/usage/pools?by=project", map[string]float64{"alpha": 4, "Capacity": 16}},
		{"alpha's viewer", alphaViewer, "/console/usage/pools?by=department", map[string]float64{"research": 4, "Capacity": 16}},
		{"research's viewer", researchViewer, "/console/usage/pools?range=7d&by=project", map[string]float64{"alpha": 4, "beta": 6, "Capacity": 16}},
		{"a viewer of no project", nobody, "/console/usage/pools?by=project", map[string]float64{"Capacity": 16}},
	} {
		if diff := cmp.Diff(tc.want, ok(tc.token, tc.path)); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", tc.who, tc.path, diff)
		}
	}

	wantAlpha := map[string]float64{"Non-preemptible": 1, "Preemptible (in quota)": 3, "Borrowed (over quota)": 0,
		"Deserved quota": 4, "Fair share": 4, "Pending demand": 0, "Preempted (S16)": 0, "Reclaimed (S17)": 0}
	if diff := cmp.Diff(wantAlpha, ok(alphaViewer, "/console/usage/projects/"+o.alpha+"?range=30d")); diff != "" {
		t.Errorf("alpha's charts to its viewer (-want +got):\n%s", diff)
	}
	wantResearch := map[string]float64{"Non-preemptible": 2, "Preemptible (in quota)": 6, "Borrowed (over quota)": 2,
		"Deserved quota": 8, "Fair share": 8, "Pending demand": 0, "Preempted (S16)": 0, "Reclaimed (S17)": 0}
	if diff := cmp.Diff(wantResearch, ok(researchViewer, "/console/usage/departments/"+o.research)); diff != "" {
		t.Errorf("research's charts to its viewer (-want +got):\n%s", diff)
	}

	for _, tc := range []struct{ who, token, path string }{
		{"alpha's viewer", alphaViewer, "/console/usage/projects/" + o.beta},
		{"alpha's viewer", alphaViewer, "/projects/" + o.beta},
		{"alpha's viewer", alphaViewer, "/console/usage/departments/" + o.ops},
		{"alpha's viewer", alphaViewer, "/departments/" + o.research},
		{"research's viewer", researchViewer, "/console/usage/projects/" + o.gamma},
		{"research's viewer", researchViewer, "/departments/" + o.ops},
		{"alpha's viewer", alphaViewer, "/api/v1/arbiter/projects/" + o.beta + "/fairness-ledger"},
	} {
		if r := as(tc.token, tc.path); r.status != 404 {
			t.Errorf("%s: GET %s = %d, want 404: %s", tc.who, tc.path, r.status, r.body)
		}
	}
	for _, path := range []string{"/projects/" + o.alpha, "/api/v1/arbiter/projects/" + o.alpha + "/fairness-ledger"} {
		if r := as(alphaViewer, path); r.status != 200 {
			t.Errorf("alpha's viewer: GET %s = %d: %s", path, r.status, r.body)
		}
	}
}

// TestUsageChartsNameAPoolThatHadNoGPUsInsteadOfDrawingIt: a node pool recorded with no GPUs
// and no work in the period (Run:ai's "default" pool of a cluster whose nodes are all in other
// pools) gets no chart, which would be an empty frame, but is named among the empty pools; a
// pool that had GPUs keeps its chart, idle or not.
func TestUsageChartsNameAPoolThatHadNoGPUsInsteadOfDrawingIt(t *testing.T) {
	t.Parallel()
	o := newUsageOrg(t)
	now := time.Now().UTC().Truncate(10 * time.Minute)
	for at := now.Add(-2 * time.Hour); at.Before(now); at = at.Add(10 * time.Minute) {
		sample := store.UsageSample{At: at, Interval: 10 * time.Minute, Pools: []store.PoolUsage{
			{NodePool: "spare", CapacityGPUs: 0}, {NodePool: "idle", CapacityGPUs: 8}}}
		if _, err := o.st.RecordUsageSample(context.Background(), sample); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/console/usage/pools?by=project", "/console/usage/pools?by=department&range=7d"} {
		var charts views.UsageCharts
		if err := json.Unmarshal(get(t, o.srv, path).body, &charts); err != nil {
			t.Fatal(err)
		}
		var drawn []string
		for _, c := range charts.Charts {
			drawn = append(drawn, c.ID)
		}
		if diff := cmp.Diff([]string{"usage-pool-default", "usage-pool-idle"}, drawn); diff != "" {
			t.Errorf("%s: charts (-want +got):\n%s", path, diff)
		}
		if diff := cmp.Diff([]string{"spare"}, charts.EmptyPools); diff != "" {
			t.Errorf("%s: empty pools (-want +got):\n%s", path, diff)
		}
	}
}

// TestUsageChartsRefuseABadRangeGroupingOrFormatNamingTheField: 400 in JSON (the charts' and
// the API's) with a sentence naming the parameter, never a 500.
func TestUsageChartsRefuseABadRangeGroupingOrFormatNamingTheField(t *testing.T) {
	t.Parallel()
	o := newUsageOrg(t)
	for _, tc := range []struct{ path, field, words string }{
		{"/console/usage/pools?range=1y", "range", `range "1y" is not one of 24h, 7d or 30d`},
		{"/console/usage/pools?by=team", "by", `by "team" is neither department nor project`},
		{"/console/usage/projects/" + o.alpha + "?format=xml", "format", `format "xml" is neither json nor csv`},
		{"/api/v1/arbiter/projects/" + o.alpha + "/fairness-ledger?from=yesterday", "from", `from "yesterday" is not a time`},
		{"/api/v1/arbiter/projects/" + o.alpha + "/fairness-ledger?from=2026-11-02&to=2026-11-01", "to", "must come after from"},
		{"/api/v1/arbiter/projects/" + o.alpha + "/fairness-ledger?from=2024-01-01&to=2026-01-01", "from", "longer than 366 days"},
	} {
		r := do(t, o.srv, "GET", tc.path, "", "")
		var answer struct{ Message string }
		if err := json.Unmarshal(r.body, &answer); err != nil {
			t.Errorf("GET %s answered no JSON: %s", tc.path, r.body)
		}
		if r.status != 400 || !strings.Contains(answer.Message, tc.words) || !strings.Contains(answer.Message, tc.field) {
			t.Errorf("GET %s = %d %q, want 400 naming %q and saying %q", tc.path, r.status, answer.Message, tc.field, tc.words)
		}
	}
}

// TestUsageChartsCSVIsTheSameDataAsTheJSON: the CSV (the charts' table without JavaScript) has
// a row per chart, bucket and series, with the JSON's values.
func TestUsageChartsCSVIsTheSameDataAsTheJSON(t *testing.T) {
	t.Parallel()
	o := newUsageOrg(t)
	var charts views.UsageCharts
	if err := json.Unmarshal(get(t, o.srv, "/console/usage/projects/"+o.beta).body, &charts); err != nil {
		t.Fatal(err)
	}
	r := get(t, o.srv, "/console/usage/projects/"+o.beta+"?format=csv")
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	var want []string
	for _, c := range charts.Charts {
		for _, s := range c.Series {
			for i, at := range c.At {
				v := ""
				if s.Values[i] != nil {
					v = fmt.Sprint(*s.Values[i])
				}
				want = append(want, c.Title+","+time.Unix(at, 0).UTC().Format(time.RFC3339)+","+csvQuoted(s.Label)+","+v)
			}
		}
	}
	if diff := cmp.Diff(append([]string{"chart,at,series,value"}, want...), lines); diff != "" {
		t.Errorf("CSV (-from the JSON +got):\n%s", diff)
	}
}

func csvQuoted(s string) string {
	if strings.ContainsAny(s, `,"`) {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// TestOnlyPagesWithChartsLoadTheCharts: the Overview, a project's and a department's page load
// uPlot and charts.js and name their charts' JSON; a page without charts loads neither, and
// the Projects and Departments pages link each name to its page.
func TestOnlyPagesWithChartsLoadTheCharts(t *testing.T) {
	t.Parallel()
	o := newUsageOrg(t)
	for path, src := range map[string]string{
		"/":                                  "/console/usage/pools?range=24h&amp;by=department",
		"/projects/" + o.alpha:               "/console/usage/projects/" + o.alpha + "?range=24h",
		"/departments/" + o.research:         "/console/usage/departments/" + o.research + "?range=24h",
		"/projects/" + o.alpha + "?range=7d": "/console/usage/projects/" + o.alpha + "?range=7d",
	} {
		body := string(get(t, o.srv, path).body)
		for _, want := range []string{`src="/static/uplot.iife.min.js"`, `src="/static/charts.js"`, `data-usage-src="` + src + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s has no %s", path, want)
			}
		}
	}
	for _, path := range []string{"/projects", "/departments", "/node-pools"} {
		body := string(get(t, o.srv, path).body)
		if strings.Contains(body, "uplot") || strings.Contains(body, "charts.js") {
			t.Errorf("GET %s loads the charts' scripts; it has no chart", path)
		}
	}
	if body := string(get(t, o.srv, "/projects").body); !strings.Contains(body, `href="/projects/`+o.alpha+`"`) {
		t.Errorf("the Projects page does not link alpha's page")
	}
	if body := string(get(t, o.srv, "/departments").body); !strings.Contains(body, `href="/departments/`+o.research+`"`) {
		t.Errorf("the Departments page does not link research's page")
	}
}
