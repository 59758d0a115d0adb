package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/internal/testkit/usageseed"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
)

// BenchmarkUsageChartsJSON30Days1000Projects answers the charts' JSON for 30 days through the
// real server and PostgreSQL, with 1,000 projects in 10 departments recorded every 30 s for
// the last 48 hours and hourly before (rolled up and pruned as the leader leaves the history):
// a project's page's charts, a department's (100 projects), and the Overview's stacked by
// project and by department (all 1,000). The history is recorded before the measurement starts.
func BenchmarkUsageChartsJSON30Days1000Projects(b *testing.B) {
	st := store.New(testdb.New(b))
	ctx := context.Background()
	projects, err := usageseed.Organization(ctx, st, 10, 1000)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	samples, err := usageseed.Record(ctx, st, usageseed.Spec{End: time.Now(), Days: 30, RawHours: 48, RawInterval: 30 * time.Second,
		NodePool: "default", Capacity: 2048, Projects: projects})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("recorded %d samples of 1,000 projects in %s", samples, time.Since(start).Round(time.Second))
	d := deps(st)
	d.Usage = st
	srv := httptest.NewServer(web.New(d))
	b.Cleanup(srv.Close)
	token := newAPIKey(b, st, "admin", "system", "")
	for _, page := range []struct{ name, path string }{
		{"project", "/console/usage/projects/" + projects[0].ID.String() + "?range=30d"},
		{"department", "/console/usage/departments/" + projects[0].DepartmentID.String() + "?range=30d"},
		{"overview-by-project", "/console/usage/pools?range=30d&by=project"},
		{"overview-by-department-24h", "/console/usage/pools?range=24h&by=department"},
		{"overview-by-department-7d", "/console/usage/pools?range=7d&by=department"},
		{"overview-by-department-30d", "/console/usage/pools?range=30d&by=department"},
		{"overview-by-project-24h", "/console/usage/pools?range=24h&by=project"},
		{"project-24h", "/console/usage/projects/" + projects[0].ID.String() + "?range=24h"},
	} {
		b.Run(page.name, func(b *testing.B) {
			var size int64
			for b.Loop() {
				req, _ := http.NewRequest("GET", srv.URL+page.path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := srv.Client().Do(req)
				if err != nil || res.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %v %v", page.path, res.Status, err)
				}
				size, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
}
