package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/web"
	"github.com/google/uuid"
)

// BenchmarkProjectMetrics30Days1000Projects calls Run:ai's project metrics route through the
// real server and PostgreSQL over 30 days of history of 1,000 projects in 10 node pools (7.2
// million hourly rows, made in SQL as the roll-up writes them, then rolled up into days by the
// store), and reports the p99 of a call: in 20 samples (Run:ai's default: two-day buckets from
// the daily rows), in 720 (hourly, a project's chart), and a department's metrics in 20 (its
// own rows, which the roll-up sums from its projects'). The fixture is made before the measurement starts.
func BenchmarkProjectMetrics30Days1000Projects(b *testing.B) {
	pool := testdb.New(b)
	st := store.NewWithTimeout(pool, 5*time.Minute)
	srv := httptest.NewServer(web.New(deps(st)))
	b.Cleanup(srv.Close)
	token := newAPIKey(b, st, "admin", "system", "")
	post := func(path, body string) string {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		got, _ := io.ReadAll(res.Body)
		var made struct{ ID string }
		if res.StatusCode != 201 || json.Unmarshal(got, &made) != nil {
			b.Fatalf("POST %s = %d %s", path, res.StatusCode, got)
		}
		return made.ID
	}
	post("/api/v1/node-pools", `{"name":"pool-0","labelKey":"arbiter.dev/node-pool"}`)
	dept := post("/api/v1/org-unit/departments", `{"name":"research","resources":[{"nodePool":{"name":"pool-0"},"gpu":{"deserved":20}}]}`)
	project := post("/api/v1/org-unit/projects", `{"name":"vision","departmentId":"`+dept+`","resources":[{"nodePool":{"name":"pool-0"},"gpu":{"deserved":2}}]}`)

	ctx := context.Background()
	const days = 30
	// The last 30 whole days before yesterday: inside the hourly rows' retention.
	t0 := time.Now().UTC().Truncate(24 * time.Hour).Add(-(days + 1) * 24 * time.Hour)
	// Project 7 is the organization's "vision", in "research"; department 7's projects are
	// "research"'s too.
	for _, sql := range []string{
		`INSERT INTO usage_pool_hours (at, node_pool, recorded_seconds, capacity_gpu_seconds)
			SELECT $1::timestamptz + h * interval '1 hour', 'pool-' || p, 3600, 4096 * 3600
			FROM generate_series(0, $2 * 24 - 1) h, generate_series(0, 9) p`,
		`INSERT INTO usage_project_hours (at, node_pool, project_id, department_id, non_preemptible_gpu_seconds,
				preemptible_gpu_seconds, borrowed_gpu_seconds, pending_gpu_seconds, deserved_gpu_seconds,
				fair_share_gpu_seconds, preemptions, reclaims)
			SELECT $1::timestamptz + h * interval '1 hour', 'pool-' || p,
				CASE WHEN i = 7 THEN $3::uuid ELSE md5('project-' || i)::uuid END,
				CASE WHEN i % 20 = 7 THEN $4::uuid ELSE md5('department-' || (i % 20))::uuid END,
				(i % 3) * 3600, ((i + h) % 4) * 3600, (h % 3) * 3600, ((i * h) % 5) * 3600, (1 + i % 4) * 3600,
				random() * 4 * 3600, (i + h) % 7 / 6, 0
			FROM generate_series(0, $2 * 24 - 1) h, generate_series(0, 9) p, generate_series(0, 999) i`,
		// what the roll-up writes beside the projects' rows: the pools' and departments' sums
		`UPDATE usage_pool_hours p SET non_preemptible_gpu_seconds = s.np, preemptible_gpu_seconds = s.pr, borrowed_gpu_seconds = s.bo
			FROM (SELECT at, node_pool, sum(non_preemptible_gpu_seconds::float8) AS np, sum(preemptible_gpu_seconds::float8) AS pr,
				sum(borrowed_gpu_seconds::float8) AS bo FROM usage_project_hours GROUP BY at, node_pool) s
			WHERE p.at = s.at AND p.node_pool = s.node_pool`,
		`INSERT INTO usage_department_hours
			SELECT department_id, at, node_pool, sum(non_preemptible_gpu_seconds::float8), sum(preemptible_gpu_seconds::float8),
				sum(borrowed_gpu_seconds::float8), sum(pending_gpu_seconds::float8), sum(deserved_gpu_seconds::float8),
				sum(fair_share_gpu_seconds::float8), sum(preemptions), sum(reclaims)
			FROM usage_project_hours GROUP BY department_id, at, node_pool`,
		`INSERT INTO usage_rollups (level, rolled_up_to) VALUES ('hour', $1::timestamptz + $2 * interval '1 day')`,
	} {
		var args []any
		if strings.Contains(sql, "$1") {
			args = []any{t0, days}
		}
		if strings.Contains(sql, "$3") {
			args = append(args, project, dept)
		}
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE usage_project_hours`); err != nil {
		b.Fatal(err)
	}
	if rolled, err := st.RollUpUsage(ctx, t0.Add(days*24*time.Hour+time.Hour), time.Minute, days); err != nil || rolled.Days != days {
		b.Fatalf("rolled up %+v: %v", rolled, err)
	}
	// The reads are timed once the bulk load is on disk and vacuumed, not while the checkpointer
	// and autovacuum work through it.
	for _, sql := range []string{`VACUUM ANALYZE usage_project_days`, `VACUUM ANALYZE usage_pool_days`, `VACUUM ANALYZE usage_pool_hours`,
		`VACUUM ANALYZE usage_department_days`, `CHECKPOINT`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	// What a round trip to the database costs on the machine: the floor under any read.
	roundTrip := func(b *testing.B) {
		var trips []time.Duration
		for range 20 {
			began := time.Now()
			if _, err := pool.Exec(ctx, `SELECT 1`); err != nil {
				b.Fatal(err)
			}
			trips = append(trips, time.Since(began))
		}
		slices.Sort(trips)
		b.ReportMetric(float64(trips[len(trips)/2].Microseconds())/1000, "select1-p50-ms")
	}

	query := func(types, samples string) string {
		return "?" + url.Values{"metricType": {types}, "start": {t0.Format(time.RFC3339)},
			"end": {t0.Add(days * 24 * time.Hour).Format(time.RFC3339)}, "numberOfSamples": {samples}}.Encode()
	}
	// The store's part of the routes' reads first: what a route adds is the rest.
	for _, c := range []struct {
		name string
		step time.Duration
	}{{"store alone, project by 2 days", 48 * time.Hour}, {"store alone, project by hour", time.Hour}} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			q := store.UsageQuery{From: t0, To: t0.Add(days * 24 * time.Hour), Step: c.step, ProjectIDs: []uuid.UUID{uuid.MustParse(project)}}
			for b.Loop() {
				began := time.Now()
				if _, _, err := st.UsageSeries(ctx, q); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(began))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			roundTrip(b)
		})
	}
	for _, c := range []struct {
		name, path string
		values     int // per measurement
	}{
		{"project in 20 samples", "/api/v1/org-unit/projects/" + project + "/metrics" + query("GPU_ALLOCATION,GPU_QUOTA", "20"), 15},
		{"project in 720 samples", "/api/v1/org-unit/projects/" + project + "/metrics" + query("GPU_ALLOCATION,GPU_QUOTA", "720"), 720},
		{"department in 20 samples", "/api/v1/org-unit/departments/" + dept + "/metrics" + query("GPU_ALLOCATION", "20"), 15},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				began := time.Now()
				req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := srv.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var got struct{ Measurements []struct{ Values []any } }
				err = json.NewDecoder(res.Body).Decode(&got)
				res.Body.Close()
				took = append(took, time.Since(began))
				if err != nil || res.StatusCode != 200 || len(got.Measurements) == 0 || len(got.Measurements[0].Values) != c.values {
					b.Fatalf("%s = %d (%v), %d measurements, want %d values each", c.path, res.StatusCode, err, len(got.Measurements), c.values)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			roundTrip(b)
		})
	}
}
