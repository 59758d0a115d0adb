package store_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// The usage history at the scale the operations guide sizes it for: 1,000 projects in every
// one of 10 node pools, each with a deserved quota (so every project is in every pool's sample).
const (
	benchProjects = 1000
	benchPools    = 10
)

func benchOrg() (projects, departments []uuid.UUID) {
	for i := range benchProjects {
		projects = append(projects, uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprint("project-", i))))
		departments = append(departments, uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprint("department-", i%20))))
	}
	return projects, departments
}

// benchSample is a sample of every pool: whole GPUs allocated and pending, deserved quotas
// that stay, fair shares with fractions.
func benchSample(at time.Time, rng *rand.Rand, projects, departments []uuid.UUID) store.UsageSample {
	u := store.UsageSample{At: at, Interval: 30 * time.Second}
	for p := range benchPools {
		pool := store.PoolUsage{NodePool: fmt.Sprint("pool-", p), CapacityGPUs: 4096}
		for i, id := range projects {
			pool.Projects = append(pool.Projects, store.ProjectUsage{ProjectID: id, DepartmentID: departments[i],
				NonPreemptible: float64(rng.IntN(3)), Preemptible: float64(rng.IntN(4)), Borrowed: float64(rng.IntN(3)),
				Pending: float64(rng.IntN(5)), Deserved: float64(1 + i%4), FairShare: 1 + rng.Float64()*4,
				Preemptions: rng.IntN(20) / 19})
		}
		u.Pools = append(u.Pools, pool)
	}
	return u
}

func relationBytes(b *testing.B, pool *pgxpool.Pool, table string) (bytes int64, rows int64) {
	b.Helper()
	err := pool.QueryRow(context.Background(), `SELECT pg_total_relation_size($1::regclass), (SELECT count(*) FROM `+table+`)`, table).Scan(&bytes, &rows)
	if err != nil {
		b.Fatal(err)
	}
	return bytes, rows
}

// BenchmarkRecordUsageSample_1000Projects10Pools writes one sample of 10 pools of 1,000
// projects each (the leader's database write per interval), and reports the raw table's bytes
// per row (one row per pool and interval; rosters and indexes included).
func BenchmarkRecordUsageSample_1000Projects10Pools(b *testing.B) {
	pool := testdb.New(b)
	st := store.NewWithTimeout(pool, time.Minute)
	projects, departments := benchOrg()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	samples := make([]store.UsageSample, b.N)
	for i := range samples {
		samples[i] = benchSample(t0.Add(time.Duration(i)*30*time.Second), rng, projects, departments)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := st.RecordUsageSample(context.Background(), samples[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if _, err := pool.Exec(context.Background(), `VACUUM ANALYZE usage_samples`); err != nil {
		b.Fatal(err)
	}
	samplesBytes, rows := relationBytes(b, pool, "usage_samples")
	rosterBytes, _ := relationBytes(b, pool, "usage_rosters")
	b.ReportMetric(float64(samplesBytes+rosterBytes)/float64(rows), "bytes/raw-row")
}

// BenchmarkUsageSeries_30Days1000Projects reads 30 days of history from the roll-ups at full
// scale: 30 days of hourly and daily rows of 1,000 projects in 10 pools (7.2 million hourly
// rows), made in SQL, then rolled up into days by the store. It reports each table's bytes per
// row. Sub-benchmarks: one project by hour (a project's chart, the metrics API), one project by
// day, every project by day (the Overview's stacked chart).
func BenchmarkUsageSeries_30Days1000Projects(b *testing.B) {
	pool := testdb.New(b)
	st := store.NewWithTimeout(pool, 5*time.Minute)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const days = 30
	// hourly rows as the roll-up writes them: GPU-seconds over a fully recorded hour
	for _, sql := range []string{
		`INSERT INTO usage_pool_hours (at, node_pool, recorded_seconds, capacity_gpu_seconds)
			SELECT $1::timestamptz + h * interval '1 hour', 'pool-' || p, 3600, 4096 * 3600
			FROM generate_series(0, $2 * 24 - 1) h, generate_series(0, 9) p`,
		`INSERT INTO usage_project_hours (at, node_pool, project_id, department_id, non_preemptible_gpu_seconds,
				preemptible_gpu_seconds, borrowed_gpu_seconds, pending_gpu_seconds, deserved_gpu_seconds,
				fair_share_gpu_seconds, preemptions, reclaims)
			SELECT $1::timestamptz + h * interval '1 hour', 'pool-' || p,
				md5('project-' || i)::uuid,
				md5('department-' || (i % 20))::uuid,
				(i % 3) * 3600, ((i + h) % 4) * 3600, (h % 3) * 3600, ((i * h) % 5) * 3600, (1 + i % 4) * 3600,
				random() * 4 * 3600, (i + h) % 7 / 6, 0
			FROM generate_series(0, $2 * 24 - 1) h, generate_series(0, 9) p, generate_series(0, 999) i`,
		`INSERT INTO usage_rollups (level, rolled_up_to) VALUES ('hour', $1::timestamptz + $2 * interval '1 day')`,
		`VACUUM ANALYZE usage_project_hours`,
	} {
		args := []any{t0, days}
		if sql == `VACUUM ANALYZE usage_project_hours` {
			args = nil
		}
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	rolled, err := st.RollUpUsage(ctx, t0.Add(days*24*time.Hour+time.Hour), time.Minute, days)
	if err != nil || rolled.Days != days {
		b.Fatalf("rolled up %+v: %v", rolled, err)
	}
	// the reads are timed once the bulk load is on disk and vacuumed, not while the checkpointer
	// and autovacuum work through it
	for _, sql := range []string{`VACUUM ANALYZE usage_project_days`, `VACUUM ANALYZE usage_pool_days`, `VACUUM ANALYZE usage_pool_hours`, `CHECKPOINT`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	hourBytes, hourRows := relationBytes(b, pool, "usage_project_hours")
	dayBytes, dayRows := relationBytes(b, pool, "usage_project_days")
	// each read asks for another project, so that no read finds its pages cached by the last
	project := func(i int) []uuid.UUID {
		return []uuid.UUID{uuid.UUID(md5.Sum([]byte(fmt.Sprint("project-", (i*7919)%benchProjects))))}
	}
	for _, c := range []struct {
		name     string
		q        store.UsageQuery
		projects func(int) []uuid.UUID
		want     int
	}{
		{"one project by hour", store.UsageQuery{From: t0, To: t0.Add(days * 24 * time.Hour), Step: time.Hour}, project, days * 24 * benchPools},
		{"one project by day", store.UsageQuery{From: t0, To: t0.Add(days * 24 * time.Hour), Step: 24 * time.Hour}, project, days * benchPools},
		{"every project by day", store.UsageQuery{From: t0, To: t0.Add(days * 24 * time.Hour), Step: 24 * time.Hour}, func(int) []uuid.UUID { return nil }, days * benchPools * benchProjects},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for i := range b.N {
				q := c.q
				q.ProjectIDs = c.projects(i)
				began := time.Now()
				points, _, err := st.UsageSeries(ctx, q)
				took = append(took, time.Since(began))
				if err != nil || len(points) != c.want {
					b.Fatalf("%d points, want %d: %v", len(points), c.want, err)
				}
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			// what a round trip costs on the machine at that moment: the floor under any read
			var trips []time.Duration
			for range 20 {
				began := time.Now()
				if _, err := pool.Exec(ctx, `SELECT 1`); err != nil {
					b.Fatal(err)
				}
				trips = append(trips, time.Since(began))
			}
			sort.Slice(trips, func(i, j int) bool { return trips[i] < trips[j] })
			b.ReportMetric(float64(trips[len(trips)/2].Microseconds())/1000, "select1-p50-ms")
			b.ReportMetric(float64(hourBytes)/float64(hourRows), "bytes/hourly-row")
			b.ReportMetric(float64(dayBytes)/float64(dayRows), "bytes/daily-row")
		})
	}
}
