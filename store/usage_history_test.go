package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// usageDay0 is a Monday, 00:00 UTC: the tests' history starts there.
var usageDay0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

var (
	projectA, projectB = uuid.MustParse("00000000-0000-0000-0000-00000000000a"), uuid.MustParse("00000000-0000-0000-0000-00000000000b")
	departmentX        = uuid.MustParse("00000000-0000-0000-0000-0000000000d1")
	departmentY        = uuid.MustParse("00000000-0000-0000-0000-0000000000d2")
)

// approx compares GPU figures as float32 storage keeps them.
var approx = cmpopts.EquateApprox(1e-6, 1e-4)

func record(t *testing.T, st *store.Store, u store.UsageSample) bool {
	t.Helper()
	recorded, err := st.RecordUsageSample(context.Background(), u)
	if err != nil {
		t.Fatalf("record the sample at %s: %v", u.At, err)
	}
	return recorded
}

func series(t *testing.T, st *store.Store, q store.UsageQuery) ([]store.UsagePoint, []store.PoolCapacityPoint) {
	t.Helper()
	points, capacity, err := st.UsageSeries(context.Background(), q)
	if err != nil {
		t.Fatalf("usage series %+v: %v", q, err)
	}
	return points, capacity
}

// TestUsageSample_AnIntervalIsRecordedOnce: a second sample of an interval already written (a
// restarted leader, a new leader after a failover) is dropped, and reading back gives the first.
func TestUsageSample_AnIntervalIsRecordedOnce(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	first := store.UsageSample{At: usageDay0.Add(10 * time.Second), Interval: 30 * time.Second, Pools: []store.PoolUsage{{
		NodePool: "a100", CapacityGPUs: 16,
		Projects: []store.ProjectUsage{
			{ProjectID: projectB, DepartmentID: departmentY, NonPreemptible: 2, Preemptible: 1.5, Borrowed: 0.5, Pending: 4, Deserved: 4, FairShare: 5, Preemptions: 1, Reclaims: 2},
			{ProjectID: projectA, DepartmentID: departmentX, Preemptible: 8, Deserved: 8, FairShare: 8},
		},
	}}}
	if !record(t, st, first) {
		t.Fatal("the first sample of an interval was not recorded")
	}
	again := first
	again.At = usageDay0.Add(25 * time.Second) // the same 30 s interval, other figures
	again.Pools = []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 99, Projects: []store.ProjectUsage{{ProjectID: projectA, DepartmentID: departmentX, Preemptible: 1}}}}
	if record(t, st, again) {
		t.Fatal("a second sample of the same interval was recorded")
	}

	points, capacity := series(t, st, store.UsageQuery{From: usageDay0, To: usageDay0.Add(time.Minute), Step: 30 * time.Second})
	want := []store.UsagePoint{
		{At: usageDay0, NodePool: "a100", ProjectID: projectA, DepartmentID: departmentX, Preemptible: 8, Deserved: 8, FairShare: 8, RecordedSeconds: 30},
		{At: usageDay0, NodePool: "a100", ProjectID: projectB, DepartmentID: departmentY, NonPreemptible: 2, Preemptible: 1.5, Borrowed: 0.5, Pending: 4, Deserved: 4, FairShare: 5, Preemptions: 1, Reclaims: 2, RecordedSeconds: 30},
	}
	if d := cmp.Diff(want, points, approx); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]store.PoolCapacityPoint{{At: usageDay0, NodePool: "a100", GPUs: 16, RecordedSeconds: 30}}, capacity, approx); d != "" {
		t.Errorf("capacity (-want +got):\n%s", d)
	}
}

// TestUsageSeries_ABucketAveragesOverItsPoolsRecordedTime: a project absent from a sample held
// nothing then, so its average counts that time as zero; counts add up; a bucket with no
// sample is absent.
func TestUsageSeries_ABucketAveragesOverItsPoolsRecordedTime(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	for i := range 4 {
		pool := store.PoolUsage{NodePool: "a100", CapacityGPUs: float64(8 + 8*(i%2))}
		if i < 2 { // A runs 4 GPUs for the first half of the minute only
			pool.Projects = []store.ProjectUsage{{ProjectID: projectA, DepartmentID: departmentX, Borrowed: 4, Preemptions: 1}}
		}
		record(t, st, store.UsageSample{At: usageDay0.Add(time.Duration(i) * 15 * time.Second), Interval: 15 * time.Second, Pools: []store.PoolUsage{pool}})
	}
	points, capacity := series(t, st, store.UsageQuery{From: usageDay0, To: usageDay0.Add(3 * time.Minute), Step: time.Minute})
	want := []store.UsagePoint{{At: usageDay0, NodePool: "a100", ProjectID: projectA, DepartmentID: departmentX, Borrowed: 2, Preemptions: 2, RecordedSeconds: 60}}
	if d := cmp.Diff(want, points, approx); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]store.PoolCapacityPoint{{At: usageDay0, NodePool: "a100", GPUs: 12, RecordedSeconds: 60}}, capacity, approx); d != "" {
		t.Errorf("capacity (-want +got):\n%s", d)
	}
}

// TestUsageQuery_RefusesAPeriodThatEndsFirstAStepUnderTheIntervalAndTooManyBuckets: each refusal
// is a validation error naming the field at fault.
func TestUsageQuery_RefusesAPeriodThatEndsFirstAStepUnderTheIntervalAndTooManyBuckets(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	record(t, st, store.UsageSample{At: usageDay0, Interval: 30 * time.Second, Pools: []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 8}}})
	for _, c := range []struct {
		name  string
		q     store.UsageQuery
		field string
	}{
		{"ends at its start", store.UsageQuery{From: usageDay0, To: usageDay0, Step: time.Minute}, "to"},
		{"ends before its start", store.UsageQuery{From: usageDay0, To: usageDay0.Add(-time.Hour), Step: time.Minute}, "to"},
		{"a step under the interval", store.UsageQuery{From: usageDay0, To: usageDay0.Add(time.Hour), Step: 10 * time.Second}, "step"},
		{"more than 10,000 buckets", store.UsageQuery{From: usageDay0, To: usageDay0.Add(10_001 * time.Minute), Step: time.Minute}, "step"},
	} {
		_, _, err := st.UsageSeries(context.Background(), c.q)
		if !errors.Is(err, store.ErrInvalid) || store.FieldOf(err) != c.field {
			t.Errorf("%s: got %v (field %q), want a validation error of field %q", c.name, err, store.FieldOf(err), c.field)
		}
	}
	_, err := st.RecordUsageSample(context.Background(), store.UsageSample{At: usageDay0.Add(time.Minute), Interval: 30 * time.Second,
		Pools: []store.PoolUsage{{NodePool: "a100", Projects: []store.ProjectUsage{{ProjectID: projectA, Borrowed: -1}}}}})
	if !errors.Is(err, store.ErrInvalid) || store.FieldOf(err) != "projects" {
		t.Errorf("a negative figure: got %v, want a validation error of field projects", err)
	}
}

// recordDays records every interval of the given days: project A borrows 2 GPUs and B holds
// 1 non-preemptible GPU in pool a100 (8 GPUs); B is preempted once an hour.
func recordDays(t *testing.T, st *store.Store, from time.Time, days int, interval time.Duration) {
	t.Helper()
	for at := from; at.Before(from.Add(time.Duration(days) * 24 * time.Hour)); at = at.Add(interval) {
		preemptions := 0
		if at.Minute() == 0 {
			preemptions = 1
		}
		record(t, st, store.UsageSample{At: at, Interval: interval, Pools: []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 8, Projects: []store.ProjectUsage{
			{ProjectID: projectA, DepartmentID: departmentX, Borrowed: 2, FairShare: 3},
			{ProjectID: projectB, DepartmentID: departmentY, NonPreemptible: 1, Deserved: 1, FairShare: 1, Preemptions: preemptions},
		}}}})
	}
}

// TestUsageRollUp_HourlyAndDailyRowsGiveTheSameSeriesAsTheRawSamples: a series read before the
// roll-up (from raw samples) equals the one read after it (from hourly and daily rows), and
// rolling up again, or on a second replica at the same time, changes nothing.
func TestUsageRollUp_HourlyAndDailyRowsGiveTheSameSeriesAsTheRawSamples(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	recordDays(t, st, usageDay0, 2, 10*time.Minute)
	now := usageDay0.Add(49 * time.Hour)
	queries := []store.UsageQuery{
		{From: usageDay0, To: now, Step: 24 * time.Hour},
		{From: usageDay0, To: now, Step: time.Hour, ProjectIDs: []uuid.UUID{projectB}},
		{From: usageDay0.Add(2 * time.Hour), To: now, Step: 3 * time.Hour},
	}
	// A step that is not a whole number of hours reads hourly rows too, each in the bucket in
	// which it starts: 90-minute buckets from 00:00 hold 2, 1, 2, 1, ... hours.
	odd := store.UsageQuery{From: usageDay0, To: usageDay0.Add(48 * time.Hour), Step: 90 * time.Minute, ProjectIDs: []uuid.UUID{projectA}}
	type read struct {
		points   []store.UsagePoint
		capacity []store.PoolCapacityPoint
	}
	var before []read
	for _, q := range queries {
		p, c := series(t, st, q)
		before = append(before, read{p, c})
	}
	if got := len(before[1].points); got != 48 {
		t.Fatalf("project B has %d hourly points from the raw samples, want 48", got)
	}

	rolled, err := st.RollUpUsage(ctx, now, time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(store.UsageRollUp{Hours: 48, Days: 2}, rolled); d != "" {
		t.Errorf("rolled up (-want +got):\n%s", d)
	}
	rows := func() []int {
		var counts []int
		for _, table := range []string{"usage_pool_hours", "usage_project_hours", "usage_pool_days", "usage_project_days"} {
			var n int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			counts = append(counts, n)
		}
		return counts
	}
	if d := cmp.Diff([]int{48, 96, 2, 4}, rows()); d != "" {
		t.Errorf("roll-up rows per table (-want +got):\n%s", d)
	}
	// The raw samples go, so that what is read next comes from the roll-ups.
	if _, err := pool.Exec(ctx, "DELETE FROM usage_samples"); err != nil {
		t.Fatal(err)
	}
	oddPoints, _ := series(t, st, odd)
	var recorded []float64
	for _, p := range oddPoints[:4] {
		recorded = append(recorded, p.RecordedSeconds)
	}
	if d := cmp.Diff([]float64{7200, 3600, 7200, 3600}, recorded); d != "" || len(oddPoints) != 32 {
		t.Errorf("90-minute buckets from the hourly rows: %d points, recorded seconds of the first four (-want +got):\n%s", len(oddPoints), d)
	}
	for i, q := range queries {
		p, c := series(t, st, q)
		if d := cmp.Diff(before[i], read{p, c}, approx, cmp.AllowUnexported(read{})); d != "" {
			t.Errorf("query %d from the roll-ups differs from the raw samples (-raw +rolled up):\n%s", i, d)
		}
	}

	// Rolling up again, twice at once (two replicas), rewrites nothing and adds nothing.
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := st.RollUpUsage(ctx, now, time.Minute, 100)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff([]int{48, 96, 2, 4}, rows()); d != "" {
		t.Errorf("roll-up rows after rolling up again (-want +got):\n%s", d)
	}
}

// TestUsageRollUp_AnHourIsSummedOnlyOnceClosed: the current hour, and the last one until the
// grace after it has passed, stay raw; a day waits for all its hours.
func TestUsageRollUp_AnHourIsSummedOnlyOnceClosed(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	recordDays(t, st, usageDay0, 1, 30*time.Minute)
	rolled, err := st.RollUpUsage(ctx, usageDay0.Add(23*time.Hour+30*time.Second), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(store.UsageRollUp{Hours: 22}, rolled); d != "" {
		t.Errorf("rolled up 30 s after hour 23 began (-want +got):\n%s", d)
	}
	rolled, err = st.RollUpUsage(ctx, usageDay0.Add(24*time.Hour+time.Minute), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(store.UsageRollUp{Hours: 2, Days: 1}, rolled); d != "" {
		t.Errorf("rolled up once the day ended (-want +got):\n%s", d)
	}
}

// TestUsageDays_GivesGPUHoursPerDayFromRolledUpAndRawRows: a day is its GPU-hours whether it
// has been rolled up or not.
func TestUsageDays_GivesGPUHoursPerDayFromRolledUpAndRawRows(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	recordDays(t, st, usageDay0, 2, 15*time.Minute)
	// The first day is rolled up; the second is still raw.
	if _, err := st.RollUpUsage(ctx, usageDay0.Add(25*time.Hour), time.Minute, 100); err != nil {
		t.Fatal(err)
	}
	days, err := st.UsageDays(ctx, usageDay0.Add(3*time.Hour), usageDay0.Add(48*time.Hour), nil, []uuid.UUID{projectA, projectB})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsageDay{}
	for _, day := range []time.Time{usageDay0, usageDay0.Add(24 * time.Hour)} {
		want = append(want,
			store.UsageDay{Day: day, NodePool: "a100", ProjectID: projectA, DepartmentID: departmentX, AllocatedGPUHours: 48, BorrowedGPUHours: 48, FairShareGPUHours: 72},
			store.UsageDay{Day: day, NodePool: "a100", ProjectID: projectB, DepartmentID: departmentY, AllocatedGPUHours: 24, NonPreemptibleGPUHours: 24, DeservedGPUHours: 24, FairShareGPUHours: 24, Preemptions: 24})
	}
	if d := cmp.Diff(want, days, approx); d != "" {
		t.Errorf("days (-want +got):\n%s", d)
	}
}

// TestPruneUsage_RemovesWhatIsPastItsRetentionButNothingNotYetRolledUp: raw samples past their
// retention go once rolled up, hourly rows once rolled up into days; what is left reads the
// same from the coarser rows.
func TestPruneUsage_RemovesWhatIsPastItsRetentionButNothingNotYetRolledUp(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	st := store.New(pool)
	ctx := context.Background()
	recordDays(t, st, usageDay0, 3, 30*time.Minute)
	now := usageDay0.Add(72 * time.Hour)
	keep := store.UsageRetention{Raw: 12 * time.Hour, Hourly: 36 * time.Hour}

	// Nothing is rolled up yet: nothing goes.
	pruned, err := st.PruneUsage(ctx, now, keep, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(store.UsagePruned{}, pruned); d != "" {
		t.Errorf("pruned before any roll-up (-want +got):\n%s", d)
	}
	daysBefore, err := st.UsageDays(ctx, usageDay0, now, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RollUpUsage(ctx, now.Add(time.Minute), time.Minute, 1000); err != nil {
		t.Fatal(err)
	}
	pruned, err = st.PruneUsage(ctx, now, keep, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Raw: 60 h of 2 samples an hour; hourly: 36 h of 2 projects.
	if d := cmp.Diff(store.UsagePruned{Samples: 120, Hours: 72}, pruned); d != "" {
		t.Errorf("pruned (-want +got):\n%s", d)
	}
	var oldestRaw, oldestHour time.Time
	if err := pool.QueryRow(ctx, "SELECT min(at) FROM usage_samples").Scan(&oldestRaw); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT min(at) FROM usage_project_hours").Scan(&oldestHour); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]time.Time{now.Add(-12 * time.Hour), now.Add(-36 * time.Hour)}, []time.Time{oldestRaw.UTC(), oldestHour.UTC()}); d != "" {
		t.Errorf("oldest raw sample and hourly row (-want +got):\n%s", d)
	}
	daysAfter, err := st.UsageDays(ctx, usageDay0, now, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(daysBefore, daysAfter, approx); d != "" {
		t.Errorf("days after pruning (-before +after):\n%s", d)
	}
}

// TestUsageSeries_ReadsOnlyThePoolsAndProjectsAsked: with pools, projects or both named, raw
// samples and roll-ups alike give only their points (and only those pools' capacity).
func TestUsageSeries_ReadsOnlyThePoolsAndProjectsAsked(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	for at := usageDay0; at.Before(usageDay0.Add(2 * time.Hour)); at = at.Add(30 * time.Minute) {
		both := []store.ProjectUsage{
			{ProjectID: projectA, DepartmentID: departmentX, Borrowed: 2},
			{ProjectID: projectB, DepartmentID: departmentY, NonPreemptible: 1},
		}
		record(t, st, store.UsageSample{At: at, Interval: 30 * time.Minute, Pools: []store.PoolUsage{
			{NodePool: "a100", CapacityGPUs: 8, Projects: both}, {NodePool: "h100", CapacityGPUs: 4, Projects: both}}})
	}
	// the first hour is rolled up, the second is still raw
	if _, err := st.RollUpUsage(ctx, usageDay0.Add(time.Hour+time.Minute), time.Minute, 10); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Pool    string
		Project uuid.UUID
	}
	for _, c := range []struct {
		name     string
		pools    []string
		projects []uuid.UUID
		want     []seen
		capacity []string
	}{
		{"a pool", []string{"h100"}, nil, []seen{{"h100", projectA}, {"h100", projectB}}, []string{"h100"}},
		{"a project", nil, []uuid.UUID{projectB}, []seen{{"a100", projectB}, {"h100", projectB}}, []string{"a100", "h100"}},
		{"a pool and a project", []string{"a100"}, []uuid.UUID{projectA}, []seen{{"a100", projectA}}, []string{"a100"}},
	} {
		points, capacity := series(t, st, store.UsageQuery{From: usageDay0, To: usageDay0.Add(2 * time.Hour), Step: time.Hour, NodePools: c.pools, ProjectIDs: c.projects})
		for _, hour := range []time.Time{usageDay0, usageDay0.Add(time.Hour)} {
			var got []seen
			for _, p := range points {
				if p.At.Equal(hour) {
					got = append(got, seen{p.NodePool, p.ProjectID})
				}
			}
			var gotCapacity []string
			for _, p := range capacity {
				if p.At.Equal(hour) {
					gotCapacity = append(gotCapacity, p.NodePool)
				}
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("%s, hour %s: points (-want +got):\n%s", c.name, hour.Format("15:04"), d)
			}
			if d := cmp.Diff(c.capacity, gotCapacity); d != "" {
				t.Errorf("%s, hour %s: capacity (-want +got):\n%s", c.name, hour.Format("15:04"), d)
			}
		}
	}
}
