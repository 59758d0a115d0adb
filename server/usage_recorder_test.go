package server

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// usagePlan is a cycle's plan: pool "a100" has 8 ready GPUs; alpha holds 3 of them (1
// non-preemptible, 1 borrowed), asks for 2 more, deserves 2 and its fair share is 4; beta has
// nothing there.
func usagePlan() *scheduler.Plan {
	return &scheduler.Plan{
		NodePools: []scheduler.NodePoolStatus{{Name: "a100", Nodes: 2, ReadyNodes: 1, GPUs: 16, ReadyGPUs: 8}},
		Projects: []scheduler.QueueStatus{
			{Name: "alpha", NodePool: "a100", Deserved: 2, Limit: scheduler.NoLimit, Allocated: 3, AllocatedNonPreemptible: 1, Borrowed: 1, Requested: 2, FairShare: 4},
			{Name: "beta", NodePool: "a100", Limit: scheduler.NoLimit},
		},
	}
}

func TestUsageSampleOf_SplitsTheAllocationAndCountsEachProjectsEventsInItsPool(t *testing.T) {
	alpha := store.ProjectRef{ID: uuid.New(), Name: "alpha", DepartmentID: uuid.New()}
	beta := store.ProjectRef{ID: uuid.New(), Name: "beta", DepartmentID: uuid.New()}
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	events := []store.PoolPreemptions{
		{ProjectID: alpha.ID, NodePool: "a100", Preemptions: 2},
		{ProjectID: alpha.ID, NodePool: "", Reclaims: 1},          // a workload that names no pool: alpha's first pool
		{ProjectID: uuid.New(), NodePool: "a100", Preemptions: 5}, // a project unknown to the plan
	}
	got := usageSampleOf(at, 30*time.Second, usagePlan(), map[string]store.ProjectRef{"alpha": alpha, "beta": beta}, events)
	want := store.UsageSample{At: at, Interval: 30 * time.Second, Pools: []store.PoolUsage{{NodePool: "a100", CapacityGPUs: 8,
		Projects: []store.ProjectUsage{{ProjectID: alpha.ID, DepartmentID: alpha.DepartmentID,
			NonPreemptible: 1, Preemptible: 1, Borrowed: 1, Pending: 2, Deserved: 2, FairShare: 4, Preemptions: 2, Reclaims: 1}},
		// beta has no figure: it is left out
	}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sample (-want +got):\n%s", d)
	}
}

// usageFixture is a database with project alpha (in department research) and a workload of
// alpha in pool a100 preempted 25 s after t0.
func usageFixture(t *testing.T, t0 time.Time) (*store.Store, store.ProjectRef) {
	t.Helper()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	system := store.Actor{Subject: "test", SubjectType: "system"}
	text := func(s string) store.Optional[string] { return store.Optional[string]{Set: true, Value: &s} }
	dept, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: text("research")}, system)
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := st.CreateProject(ctx, store.ProjectUpdate{Name: text("alpha"), DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &dept.ID}}, system)
	if err != nil {
		t.Fatal(err)
	}
	w := store.WorkloadRecord{UID: "uid-train", Namespace: "ns", Name: "train", Kind: "Job", ProjectID: &alpha.ID, ProjectName: "alpha",
		Phase: "Preempted", NodePool: "a100", QueuedAt: t0}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{w}, []store.WorkloadEvent{
		{WorkloadUID: "uid-train", At: t0.Add(25 * time.Second), Kind: "Preempted", Reason: "Preempted", Message: "Preempted."}}); err != nil {
		t.Fatal(err)
	}
	return st, store.ProjectRef{ID: alpha.ID, Name: "alpha", DepartmentID: dept.ID}
}

// replica is one replica's usage recorder; it acts while leads is true.
type replica struct {
	*usageRecorder
	leads atomic.Bool
}

func newReplica(st *store.Store, last func() *kube.Result, interval time.Duration) *replica {
	r := &replica{}
	r.usageRecorder = &usageRecorder{st: st, last: last, acting: r.leads.Load, interval: interval,
		retention: store.DefaultUsageRetention, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return r
}

func sampleTimes(t *testing.T, st *store.Store) []time.Time {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT at FROM usage_samples ORDER BY at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		out = append(out, at.UTC())
	}
	return out
}

// TestUsageRecorder_AStandbyRecordsNothingAFailoverLosesAtMostOneIntervalARestartDoesNotDoubleCount:
// two replicas share one database. While A leads, B records nothing; A restarted mid-term
// samples an interval it wrote already and adds nothing (not its preemption either); while the
// lease passes from A to B no one records (one interval lost); then B records.
func TestUsageRecorder_AStandbyRecordsNothingAFailoverLosesAtMostOneIntervalARestartDoesNotDoubleCount(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	st, alpha := usageFixture(t, t0)
	ctx := context.Background()
	const interval = 30 * time.Second
	var cycleAt atomic.Pointer[time.Time]
	last := func() *kube.Result { return &kube.Result{At: *cycleAt.Load(), Plan: usagePlan()} }
	a, b := newReplica(st, last, interval), newReplica(st, last, interval)
	tick := func(k int, rs ...*replica) []bool {
		at := t0.Add(time.Duration(k) * interval)
		cycleAt.Store(&at)
		var recorded []bool
		for _, r := range rs {
			ok, err := r.sample(ctx, at)
			if err != nil {
				t.Fatalf("tick %d: %v", k, err)
			}
			recorded = append(recorded, ok)
		}
		return recorded
	}

	a.leads.Store(true)
	for k := range 3 {
		if d := cmp.Diff([]bool{true, false}, tick(k, a, b)); d != "" {
			t.Errorf("tick %d, A leads: recorded by A, B (-want +got):\n%s", k, d)
		}
	}
	if b.tried.Load() != 0 {
		t.Errorf("the standby set out to record %d samples, want none", b.tried.Load())
	}
	restarted := newReplica(st, last, interval)
	restarted.leads.Store(true)
	if d := cmp.Diff([]bool{false}, tick(2, restarted)); d != "" {
		t.Errorf("A restarted, tick 2 again: recorded (-want +got):\n%s", d)
	}
	a.leads.Store(false) // the lease passes: no one leads at tick 3
	if d := cmp.Diff([]bool{false, false}, tick(3, a, b)); d != "" {
		t.Errorf("tick 3, no one leads: recorded by A, B (-want +got):\n%s", d)
	}
	b.leads.Store(true)
	for k := 4; k < 6; k++ {
		if d := cmp.Diff([]bool{false, true}, tick(k, a, b)); d != "" {
			t.Errorf("tick %d, B leads: recorded by A, B (-want +got):\n%s", k, d)
		}
	}

	var want []time.Time
	for _, k := range []int{0, 1, 2, 4, 5} {
		want = append(want, t0.Add(time.Duration(k)*interval))
	}
	if d := cmp.Diff(want, sampleTimes(t, st)); d != "" {
		t.Errorf("samples recorded (-want +got):\n%s", d)
	}
	// The preemption at t0+25s is counted once, by the sample whose window [t0+20s, t0+50s)
	// holds it (tick 2), though tick 2 was sampled twice.
	points, _, err := st.UsageSeries(ctx, store.UsageQuery{From: t0, To: t0.Add(3 * time.Minute), Step: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	wantPoints := []store.UsagePoint{{At: t0, NodePool: "a100", ProjectID: alpha.ID, DepartmentID: alpha.DepartmentID,
		NonPreemptible: 1, Preemptible: 1, Borrowed: 1, Pending: 2, Deserved: 2, FairShare: 4, Preemptions: 1, RecordedSeconds: 150}}
	if d := cmp.Diff(wantPoints, points); d != "" {
		t.Errorf("the history over 3 minutes (-want +got):\n%s", d)
	}
}

// TestUsageRecorder_RecordsOnEveryIntervalWhileLeadingOnly: two replicas' recorders run side by
// side on one database with a 1 s interval. The leader's samples appear, the standby sets out
// to record none; when leadership moves, the new leader records and the old one stops.
func TestUsageRecorder_RecordsOnEveryIntervalWhileLeadingOnly(t *testing.T) {
	t.Parallel()
	st, _ := usageFixture(t, time.Now())
	last := func() *kube.Result { return &kube.Result{At: time.Now(), Plan: usagePlan()} }
	a, b := newReplica(st, last, time.Second), newReplica(st, last, time.Second)
	a.leads.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	for _, r := range []*replica{a, b} {
		go func() { r.run(ctx); done <- struct{}{} }()
	}
	poll.Until(t, "the leader has recorded 2 samples", 30*time.Second, func() bool { return len(sampleTimes(t, st)) >= 2 })
	if n := b.tried.Load(); n != 0 {
		t.Errorf("the standby set out to record %d samples while A led, want none", n)
	}
	a.leads.Store(false)
	b.leads.Store(true)
	triedByA := a.tried.Load()
	poll.Until(t, "the new leader has recorded 2 samples", 30*time.Second, func() bool { return b.tried.Load() >= 2 })
	if n := a.tried.Load(); n != triedByA {
		t.Errorf("the old leader set out to record %d samples after it stopped leading, want none", n-triedByA)
	}
	cancel()
	<-done
	<-done
	times := sampleTimes(t, st)
	for i := 1; i < len(times); i++ {
		if !times[i].After(times[i-1]) || times[i].Sub(times[i-1])%time.Second != 0 {
			t.Errorf("samples %v and %v are not distinct whole intervals apart", times[i-1], times[i])
		}
	}
}

func TestUsageInterval_MustBeWholeSecondsDividingAnHour(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, time.Hour} {
		if err := validUsageInterval(d); err != nil {
			t.Errorf("%s refused: %v", d, err)
		}
	}
	for _, d := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, 7 * time.Second, 70 * time.Second, 2 * time.Hour} {
		if err := validUsageInterval(d); err == nil {
			t.Errorf("%s accepted; it does not divide an hour in whole seconds", d)
		}
	}
}
