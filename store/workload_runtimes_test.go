package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// The median runtime per project and type counts the workloads that completed in the window,
// not those that failed, were preempted, still run, or completed before it.
func TestMedianRuntimes(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	rec := func(uid, project, typ, phase string, started, finished *time.Time) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "ns", Name: uid, Kind: "Job", APIGroup: "batch", TypeName: typ,
			ProjectName: project, PriorityName: "low", PriorityValue: 40, Phase: phase, Gang: 1, RequestedGPUs: 1,
			QueuedAt: now.Add(-48 * time.Hour), StartedAt: started, FinishedAt: finished}
	}
	records := []store.WorkloadRecord{
		rec("a1", "team", "Training", "Completed", at(-3*time.Hour), at(-2*time.Hour)),                // 60 min
		rec("a2", "team", "Training", "Completed", at(-5*time.Hour), at(-4*time.Hour+30*time.Minute)), // 90 min
		rec("a3", "team", "Training", "Completed", at(-4*time.Hour), at(-4*time.Hour+20*time.Minute)), // 20 min
		rec("a4", "team", "Training", "Failed", at(-2*time.Hour), at(-time.Hour)),
		rec("a5", "team", "Training", "Preempted", at(-2*time.Hour), at(-time.Hour)),
		rec("a6", "team", "Training", "Running", at(-10*time.Hour), nil),
		rec("old", "team", "Training", "Completed", at(-40*time.Hour), at(-30*time.Hour)), // before the window
		rec("b1", "team", "Workspace", "Completed", at(-time.Hour), at(-30*time.Minute)),
		rec("c1", "other", "Training", "Completed", at(-time.Hour), at(-50*time.Minute)),
	}
	if err := st.RecordWorkloads(ctx, records, nil); err != nil {
		t.Fatal(err)
	}
	got, err := st.MedianRuntimes(ctx, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.RuntimeMedian{
		{Project: "other", Type: "Training", Median: 10 * time.Minute, Count: 1},
		{Project: "team", Type: "Training", Median: 60 * time.Minute, Count: 3},
		{Project: "team", Type: "Workspace", Median: 30 * time.Minute, Count: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("medians (-want +got):\n%s", d)
	}
}
