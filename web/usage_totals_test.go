package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// TestUsageChartsFromTheTotalsEqualThoseSummedFromEveryProject: the Overview's charts of a
// caller who reads every project (read from the departments' and pools' totals, "others" as the
// pool's total less the top projects') equal those of a caller who reads the same projects one
// by one (summed from each project's rows), by department and by project, from raw samples and
// from roll-ups; and a department's charts equal its projects' charts added up.
func TestUsageChartsFromTheTotalsEqualThoseSummedFromEveryProject(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	d := deps(st)
	d.Usage = st
	srv := httptest.NewServer(web.New(d))
	t.Cleanup(srv.Close)
	admin := newAPIKey(t, st, "admin", "system", "")
	signIn(srv, admin)
	research := create(t, srv, "/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":40}}]}`)
	researchViewer := newAPIKey(t, st, "viewer", "department", research) // reads the projects by their ids
	var projects []string
	for i := range 11 { // more than the Overview names: the rest are "others"
		projects = append(projects, create(t, srv, "/api/v1/org-unit/projects",
			fmt.Sprintf(`{"name":"p%02d","departmentId":%q,"resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":2}}]}`, i, research)))
	}
	now := time.Now().UTC().Truncate(10 * time.Minute)
	for at := now.Add(-3 * time.Hour); at.Before(now); at = at.Add(10 * time.Minute) {
		var usage []store.ProjectUsage
		for i, p := range projects {
			usage = append(usage, store.ProjectUsage{ProjectID: uuid.MustParse(p), DepartmentID: uuid.MustParse(research),
				NonPreemptible: 1, Preemptible: float64(i), Borrowed: float64((i + at.Hour()) % 3), Pending: 1, Deserved: 2, FairShare: 2.5})
		}
		sample := store.UsageSample{At: at, Interval: 10 * time.Minute, Pools: []store.PoolUsage{
			{NodePool: "default", CapacityGPUs: 64, Projects: usage}, {NodePool: "spare", CapacityGPUs: 8}}}
		if _, err := st.RecordUsageSample(context.Background(), sample); err != nil {
			t.Fatal(err)
		}
	}
	charts := func(token, path string) views.UsageCharts {
		t.Helper()
		r := doAs(t, srv, token, "GET", path, "", "")
		var c views.UsageCharts
		if r.status != 200 || json.Unmarshal(r.body, &c) != nil {
			t.Fatalf("GET %s = %d: %s", path, r.status, r.body)
		}
		return c
	}
	for _, when := range []string{"raw samples", "rolled up"} {
		if when == "rolled up" {
			if _, err := st.RollUpUsage(context.Background(), time.Now(), time.Minute, 100); err != nil {
				t.Fatal(err)
			}
		}
		for _, path := range []string{"/console/usage/pools?by=project", "/console/usage/pools?by=department", "/console/usage/pools?range=7d&by=project"} {
			totals := charts(admin, path)
			if len(totals.Charts) != 2 || len(totals.Charts[0].Series) < 2 {
				t.Fatalf("%s: %s: %+v, want a chart of stacks per pool", when, path, totals)
			}
			if diff := cmp.Diff(charts(researchViewer, path), totals); diff != "" {
				t.Errorf("%s: %s (-summed from every project +from the totals):\n%s", when, path, diff)
			}
		}
		department := charts(admin, "/console/usage/departments/"+research)
		sum := charts(admin, "/console/usage/projects/"+projects[0])
		for _, p := range projects[1:] {
			for i, c := range charts(admin, "/console/usage/projects/"+p).Charts {
				for j, s := range c.Series {
					for k, v := range s.Values {
						if v != nil {
							*sum.Charts[i].Series[j].Values[k] += *v
						}
					}
				}
			}
		}
		if diff := cmp.Diff(sum, department); diff != "" {
			t.Errorf("%s: the department's charts (-its projects' added up +from its totals):\n%s", when, diff)
		}
	}
}
