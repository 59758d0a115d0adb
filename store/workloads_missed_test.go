package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestMissedWorkloadsAreRecordedOnce: a finished workload without a record gets one with its
// history; running the reconciliation again, or for a workload the scheduler recorded
// meanwhile, writes nothing: no second record, no second history, the scheduler's record kept.
func TestMissedWorkloadsAreRecordedOnce(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	queued := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	started, finished := queued.Add(time.Minute), queued.Add(time.Hour)
	missed := func(uid string) store.MissedWorkload {
		return store.MissedWorkload{
			Record: store.WorkloadRecord{UID: uid, Namespace: "team-a", Name: uid, Kind: "Job", APIGroup: "batch", TypeName: "Job",
				ProjectName: "team-a", Phase: "Completed", Gang: 1, RequestedGPUs: 1, Nodes: []string{"node-1"},
				QueuedAt: queued, StartedAt: &started, FinishedAt: &finished},
			Events: []store.WorkloadEvent{
				{WorkloadUID: uid, At: queued, Kind: "Queued", Message: "Queued in project team-a."},
				{WorkloadUID: uid, At: started, Kind: "Admitted", Message: "Admitted on [node-1] with 1 GPU."},
				{WorkloadUID: uid, At: finished, Kind: "Completed", Message: store.FinishMessage("Completed")},
			},
		}
	}
	// The scheduler recorded "running" itself, still unfinished.
	running := store.WorkloadRecord{UID: "running", Namespace: "team-a", Name: "running", Kind: "Job", APIGroup: "batch",
		TypeName: "Job", Phase: "Running", Gang: 1, RequestedGPUs: 1, QueuedAt: queued, StartedAt: &started}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{running}, []store.WorkloadEvent{{WorkloadUID: "running", At: queued, Kind: "Queued"}}); err != nil {
		t.Fatal(err)
	}

	for run, want := range []int{1, 0} {
		n, err := st.RecordMissedWorkloads(ctx, []store.MissedWorkload{missed("finished"), missed("running")})
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("run %d recorded %d workloads, want %d", run+1, n, want)
		}
	}

	type recorded struct {
		Phase             string
		Started, Finished *time.Time
		History           []string
	}
	read := func(uid string) recorded {
		r, err := st.WorkloadRecord(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.WorkloadEvents(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		got := recorded{Phase: r.Phase, Started: r.StartedAt, Finished: r.FinishedAt}
		for _, e := range evs {
			got.History = append(got.History, e.At.UTC().Format(time.TimeOnly)+" "+e.Kind)
		}
		return got
	}
	sameInstant := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	want := recorded{Phase: "Completed", Started: &started, Finished: &finished,
		History: []string{"09:00:00 Queued", "09:01:00 Admitted", "10:00:00 Completed"}}
	if diff := cmp.Diff(want, read("finished"), sameInstant); diff != "" {
		t.Errorf("the missed workload (-want +got):\n%s", diff)
	}
	want = recorded{Phase: "Running", Started: &started, History: []string{"09:00:00 Queued"}}
	if diff := cmp.Diff(want, read("running"), sameInstant); diff != "" {
		t.Errorf("the workload the scheduler recorded (-want +got):\n%s", diff)
	}
}
