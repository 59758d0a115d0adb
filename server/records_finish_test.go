package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/lifecycle"
	"github.com/arbiterhq/arbiter/store"
)

// A workload that finished while no replica recorded (the leader died, the standby took over
// later) is recorded finished when the cluster says it finished, not when the new leader
// noticed; and a finish written twice (a successor finishing what its predecessor's last
// batch also finished) leaves one end in the history.
func TestRecorderFinishesAtTheClustersTime(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	completed := started.Add(time.Hour)
	newTerm := func() *recorder {
		r, err := newRecorder(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		r.ended = func(uid string) time.Time { return completed }
		return r
	}
	running := lifecycle.Record{UID: "uid-1", Namespace: "ns", Name: "job-1", Kind: "Job", Phase: scheduler.PhaseRunning,
		QueuedAt: started, StartedAt: &started}
	r := newTerm()
	r.merge(lifecycle.Change{Records: []lifecycle.Record{running}})
	r.flush(ctx)

	for range 2 {
		r := newTerm()
		r.merge(lifecycle.Change{Finished: map[string]scheduler.Phase{"uid-1": scheduler.PhaseCompleted}})
		r.flush(ctx)
	}
	rec, err := st.WorkloadRecord(ctx, "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Phase != "Completed" || rec.FinishedAt == nil || !rec.FinishedAt.Equal(completed) {
		t.Errorf("record: %s, finished at %v; want Completed at %s", rec.Phase, rec.FinishedAt, completed)
	}
	evs, err := st.WorkloadEvents(ctx, "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, e := range evs {
		if e.Kind == "Completed" {
			ends = append(ends, e.At.UTC().Format(time.TimeOnly))
		}
	}
	if diff := cmp.Diff([]string{"10:00:00"}, ends); diff != "" {
		t.Errorf("the history's ends (-want +got):\n%s", diff)
	}
}
