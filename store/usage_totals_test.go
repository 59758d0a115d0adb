package store_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

var projectC = uuid.MustParse("00000000-0000-0000-0000-00000000000c")

// recordVaried records every interval of the given hours in two pools: A (department X) and B
// (Y) with figures that change each hour, and C, which is in X for the first two days and in Y
// after (a move on a bucket's edge: within one, see DepartmentUsageSeries);
// pool h100 holds only A and C, and nothing at all in its first hour.
func recordVaried(t *testing.T, st *store.Store, hours int, interval time.Duration) {
	t.Helper()
	for at := usageDay0; at.Before(usageDay0.Add(time.Duration(hours) * time.Hour)); at = at.Add(interval) {
		h := float64(at.Sub(usageDay0) / time.Hour)
		cDepartment := departmentX
		if h >= 48 {
			cDepartment = departmentY
		}
		var preemptions int
		if at.Minute() == 0 {
			preemptions = 1
		}
		a := store.ProjectUsage{ProjectID: projectA, DepartmentID: departmentX, NonPreemptible: 1, Preemptible: float64(int(h) % 3), Borrowed: 0.5, Pending: 2, Deserved: 2, FairShare: 2.5}
		b := store.ProjectUsage{ProjectID: projectB, DepartmentID: departmentY, Preemptible: 2, Borrowed: float64(int(h) % 4), Deserved: 2, FairShare: 3, Preemptions: preemptions}
		c := store.ProjectUsage{ProjectID: projectC, DepartmentID: cDepartment, NonPreemptible: float64(int(h) % 5), Pending: 1, Deserved: 1, FairShare: 1, Reclaims: preemptions}
		h100 := store.PoolUsage{NodePool: "h100", CapacityGPUs: 8, Projects: []store.ProjectUsage{a, c}}
		if h < 1 {
			h100.Projects = nil
		}
		record(t, st, store.UsageSample{At: at, Interval: interval, Pools: []store.PoolUsage{
			{NodePool: "a100", CapacityGPUs: 16, Projects: []store.ProjectUsage{a, b, c}}, h100}})
	}
}

// departmentsFromProjects sums a series' project points per department (each in the department
// its point names) and its pools' points, as DepartmentUsageSeries should answer them.
func departmentsFromProjects(points []store.UsagePoint, capacity []store.PoolCapacityPoint, departments []uuid.UUID) ([]store.DepartmentUsagePoint, []store.PoolUsagePoint) {
	type key struct {
		at   time.Time
		pool string
		id   uuid.UUID
	}
	byDepartment := map[key]*store.DepartmentUsagePoint{}
	byPool := map[key]*store.PoolUsagePoint{}
	for _, c := range capacity {
		byPool[key{c.At, c.NodePool, uuid.Nil}] = &store.PoolUsagePoint{At: c.At, NodePool: c.NodePool, CapacityGPUs: c.GPUs, RecordedSeconds: c.RecordedSeconds}
	}
	for _, p := range points {
		pool := byPool[key{p.At, p.NodePool, uuid.Nil}]
		pool.NonPreemptible += p.NonPreemptible
		pool.Preemptible += p.Preemptible
		pool.Borrowed += p.Borrowed
		if len(departments) > 0 && !slices.Contains(departments, p.DepartmentID) {
			continue
		}
		k := key{p.At, p.NodePool, p.DepartmentID}
		d := byDepartment[k]
		if d == nil {
			d = &store.DepartmentUsagePoint{At: p.At, NodePool: p.NodePool, DepartmentID: p.DepartmentID, RecordedSeconds: p.RecordedSeconds}
			byDepartment[k] = d
		}
		d.NonPreemptible += p.NonPreemptible
		d.Preemptible += p.Preemptible
		d.Borrowed += p.Borrowed
		d.Pending += p.Pending
		d.Deserved += p.Deserved
		d.FairShare += p.FairShare
		d.Preemptions += p.Preemptions
		d.Reclaims += p.Reclaims
	}
	var ds []store.DepartmentUsagePoint
	for _, d := range byDepartment {
		ds = append(ds, *d)
	}
	slices.SortFunc(ds, func(a, b store.DepartmentUsagePoint) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.NodePool, b.NodePool), bytes.Compare(a.DepartmentID[:], b.DepartmentID[:]))
	})
	var ps []store.PoolUsagePoint
	for _, p := range byPool {
		ps = append(ps, *p)
	}
	slices.SortFunc(ps, func(a, b store.PoolUsagePoint) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.NodePool, b.NodePool))
	})
	return ds, ps
}

// totalsQueries are read before and after the roll-up: by day, by hour, by a step that is no
// whole number of rows, for one pool and for one department.
var totalsQueries = []store.UsageTotalsQuery{
	{From: usageDay0, To: usageDay0.Add(51 * time.Hour), Step: 24 * time.Hour},
	{From: usageDay0, To: usageDay0.Add(51 * time.Hour), Step: time.Hour},
	{From: usageDay0.Add(3 * time.Hour), To: usageDay0.Add(51 * time.Hour), Step: 3 * time.Hour, NodePools: []string{"h100"}},
	{From: usageDay0, To: usageDay0.Add(51 * time.Hour), Step: time.Hour, DepartmentIDs: []uuid.UUID{departmentY}},
}

// checkTotalsAgreeWithProjects reads each query's departments' and pools' totals and the
// projects' series of the same period, and says where they differ.
func checkTotalsAgreeWithProjects(t *testing.T, st *store.Store, when string) {
	t.Helper()
	ctx := context.Background()
	for i, q := range totalsQueries {
		points, capacity := series(t, st, store.UsageQuery{From: q.From, To: q.To, Step: q.Step, NodePools: q.NodePools})
		wantDepartments, wantPools := departmentsFromProjects(points, capacity, q.DepartmentIDs)
		departments, pools, err := st.DepartmentUsageSeries(ctx, q)
		if err != nil {
			t.Fatalf("%s: query %d: %v", when, i, err)
		}
		if d := gocmp.Diff(wantDepartments, departments, approx); d != "" {
			t.Errorf("%s: query %d: departments (-sum of the projects +totals):\n%s", when, i, d)
		}
		if d := gocmp.Diff(wantPools, pools, approx); d != "" {
			t.Errorf("%s: query %d: pools (-sum of the projects +totals):\n%s", when, i, d)
		}
		poolsAlone, err := st.PoolUsageSeries(ctx, q)
		if err != nil {
			t.Fatalf("%s: query %d: %v", when, i, err)
		}
		if d := gocmp.Diff(wantPools, poolsAlone, approx); d != "" {
			t.Errorf("%s: query %d: the pools alone (-sum of the projects +totals):\n%s", when, i, d)
		}
	}
}

// checkSumRows compares, in each roll-up level, the department rows and the pool rows' allocation
// with the sums of the project rows of the same period, department and pool.
func checkSumRows(t *testing.T, pool *pgxpool.Pool, when string) {
	t.Helper()
	ctx := context.Background()
	for _, level := range []string{"hours", "days"} {
		var departmentsOff, poolsOff, departmentRows, poolRows int
		err := pool.QueryRow(ctx, `
			WITH p AS (SELECT department_id, at, node_pool, sum(non_preemptible_gpu_seconds::float8) np, sum(preemptible_gpu_seconds::float8) pr,
					sum(borrowed_gpu_seconds::float8) b, sum(pending_gpu_seconds::float8) pe, sum(deserved_gpu_seconds::float8) de,
					sum(fair_share_gpu_seconds::float8) fs, sum(preemptions) pm, sum(reclaims) rc
				FROM usage_project_`+level+` GROUP BY 1, 2, 3)
			SELECT (SELECT count(*) FROM p FULL JOIN usage_department_`+level+` d USING (department_id, at, node_pool)
				WHERE d.at IS NULL OR p.at IS NULL OR abs(p.np - d.non_preemptible_gpu_seconds) > 1 OR abs(p.pr - d.preemptible_gpu_seconds) > 1
					OR abs(p.b - d.borrowed_gpu_seconds) > 1 OR abs(p.pe - d.pending_gpu_seconds) > 1 OR abs(p.de - d.deserved_gpu_seconds) > 1
					OR abs(p.fs - d.fair_share_gpu_seconds) > 1 OR p.pm <> d.preemptions OR p.rc <> d.reclaims),
				(SELECT count(*) FROM usage_pool_`+level+` o LEFT JOIN (SELECT at, node_pool, sum(np) np, sum(pr) pr, sum(b) b FROM p GROUP BY 1, 2) s USING (at, node_pool)
				WHERE abs(coalesce(s.np, 0) - o.non_preemptible_gpu_seconds) > 1 OR abs(coalesce(s.pr, 0) - o.preemptible_gpu_seconds) > 1
					OR abs(coalesce(s.b, 0) - o.borrowed_gpu_seconds) > 1),
				(SELECT count(*) FROM usage_department_`+level+`), (SELECT count(*) FROM usage_pool_`+level+`)`).
			Scan(&departmentsOff, &poolsOff, &departmentRows, &poolRows)
		if err != nil {
			t.Fatal(err)
		}
		if departmentsOff != 0 || poolsOff != 0 {
			t.Errorf("%s: %s: %d department rows and %d pool rows are not their project rows' sums", when, level, departmentsOff, poolsOff)
		}
		if departmentRows == 0 || poolRows == 0 {
			t.Errorf("%s: %s: %d department rows and %d pool rows, want some of each", when, level, departmentRows, poolRows)
		}
	}
}

// TestUsageTotals_AreTheSumsOfTheProjectRows: the departments' and pools' totals, read from the
// raw samples and from the roll-ups, equal the projects' series summed per department and pool;
// the roll-up's department and pool rows are the sums of its project rows, after rolling up
// once, again on two replicas at once, and after pruning.
func TestUsageTotals_AreTheSumsOfTheProjectRows(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	recordVaried(t, st, 51, 10*time.Minute)
	now := usageDay0.Add(51 * time.Hour)
	checkTotalsAgreeWithProjects(t, st, "from the raw samples")

	if _, err := st.RollUpUsage(ctx, now, time.Minute, 100); err != nil {
		t.Fatal(err)
	}
	checkSumRows(t, pool, "rolled up")
	checkTotalsAgreeWithProjects(t, st, "rolled up")

	errs := make(chan error, 2)
	for range 2 {
		go func() {
			// each replica rewrites the periods from the start, as after a lost mark
			_, err := st.RollUpUsage(ctx, now, time.Minute, 100)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `DELETE FROM usage_rollups`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RollUpUsage(ctx, now, time.Minute, 100); err != nil {
		t.Fatal(err)
	}
	checkSumRows(t, pool, "rolled up again, twice at once and from the start")
	checkTotalsAgreeWithProjects(t, st, "rolled up again")

	keep := store.UsageRetention{Raw: 12 * time.Hour, Hourly: 36 * time.Hour}
	if _, err := st.PruneUsage(ctx, now, keep, 1000); err != nil {
		t.Fatal(err)
	}
	checkSumRows(t, pool, "pruned")
	var oldestHour, oldestDepartmentHour time.Time
	if err := pool.QueryRow(ctx, `SELECT (SELECT min(at) FROM usage_project_hours), (SELECT min(at) FROM usage_department_hours)`).
		Scan(&oldestHour, &oldestDepartmentHour); err != nil {
		t.Fatal(err)
	}
	if !oldestHour.Equal(oldestDepartmentHour) {
		t.Errorf("after pruning the oldest project hour is %s, the oldest department hour %s", oldestHour.UTC(), oldestDepartmentHour.UTC())
	}
}

// TestTopProjectsByAllocation_AreTheProjectsThatHeldTheMostPerPool: per pool, the projects with
// the most GPU-hours over the period, most first, as the projects' own series sum them, from
// raw samples and from roll-ups alike; a department named counts only its projects.
func TestTopProjectsByAllocation_AreTheProjectsThatHeldTheMostPerPool(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	recordVaried(t, st, 51, 10*time.Minute)
	now := usageDay0.Add(51 * time.Hour)
	want := func(q store.UsageTotalsQuery, n int) []store.ProjectAllocation {
		points, _ := series(t, st, store.UsageQuery{From: q.From, To: q.To, Step: q.Step, NodePools: q.NodePools})
		totals := map[[2]string]float64{}
		for _, p := range points {
			if len(q.DepartmentIDs) == 0 || slices.Contains(q.DepartmentIDs, p.DepartmentID) {
				totals[[2]string{p.NodePool, p.ProjectID.String()}] += (p.NonPreemptible + p.Preemptible + p.Borrowed) * p.RecordedSeconds / 3600
			}
		}
		var out []store.ProjectAllocation
		for k, v := range totals {
			out = append(out, store.ProjectAllocation{NodePool: k[0], ProjectID: uuid.MustParse(k[1]), AllocatedGPUHours: v})
		}
		slices.SortFunc(out, func(a, b store.ProjectAllocation) int {
			return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours))
		})
		var top []store.ProjectAllocation
		perPool := map[string]int{}
		for _, a := range out {
			if perPool[a.NodePool]++; perPool[a.NodePool] <= n {
				top = append(top, a)
			}
		}
		return top
	}
	queries := []struct {
		q store.UsageTotalsQuery
		n int
	}{
		{store.UsageTotalsQuery{From: usageDay0, To: now, Step: 24 * time.Hour}, 2},
		{store.UsageTotalsQuery{From: usageDay0, To: now, Step: time.Hour}, 1},
		{store.UsageTotalsQuery{From: usageDay0, To: now, Step: time.Hour, NodePools: []string{"a100"}, DepartmentIDs: []uuid.UUID{departmentX}}, 3},
	}
	for _, when := range []string{"from the raw samples", "rolled up"} {
		if when == "rolled up" {
			if _, err := st.RollUpUsage(ctx, now, time.Minute, 100); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range queries {
			got, err := st.TopProjectsByAllocation(ctx, c.q, c.n)
			if err != nil {
				t.Fatalf("%s: query %d: %v", when, i, err)
			}
			if d := gocmp.Diff(want(c.q, c.n), got, approx); d != "" || len(got) == 0 {
				t.Errorf("%s: query %d: top projects (-from the series +got):\n%s", when, i, d)
			}
		}
	}
	if _, err := st.TopProjectsByAllocation(ctx, queries[0].q, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("0 projects per pool: %v, want a validation error", err)
	}
}
