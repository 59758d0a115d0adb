package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// estimateSnapshot: one node of 4 GPUs held by a running Job of type "Training" in project
// team, started at t0 with no deadline, and a waiting 4-GPU workload.
func estimateSnapshot(t0 time.Time) scheduler.Snapshot {
	r := scheduler.Resources{MilliCPU: 8000, Memory: 1 << 34, GPUs: 4, Pods: 110}
	pod := func(name, node string) scheduler.Pod {
		return scheduler.Pod{UID: "uid-" + name, Namespace: "ns", Name: name, NodeName: node, Requests: scheduler.Resources{MilliCPU: 1000, GPUs: 4}}
	}
	return scheduler.Snapshot{
		Now: t0.Add(10 * time.Minute), Priorities: []scheduler.Priority{{Name: "low", Value: 40}},
		NodePools: []scheduler.NodePool{{Name: "default"}},
		Nodes:     []scheduler.Node{{Name: "n1", Ready: true, Capacity: r, Allocatable: r}},
		Projects:  []scheduler.Project{{Name: "team", Quotas: map[string]scheduler.Quota{"default": {Deserved: 4, Limit: scheduler.NoLimit}}}},
		Workloads: []scheduler.Workload{
			{UID: "uid-run", Namespace: "ns", Name: "run", Kind: "Job", Type: "Training", Project: "team", Phase: scheduler.PhaseRunning,
				QueuedAt: t0, StartedAt: t0, Pods: []scheduler.Pod{pod("run-0", "n1")}},
			{UID: "uid-wait", Namespace: "ns", Name: "wait", Kind: "Job", Type: "Training", Project: "team", Phase: scheduler.PhasePending,
				QueuedAt: t0.Add(time.Minute), Pods: []scheduler.Pod{pod("wait-0", "")}},
		},
	}
}

// A pass estimates from the last cycle's snapshot, with the median runtime of the type in the
// project from the records; the medians are read once however many passes follow, and a pass
// runs only for a newer cycle.
func TestEstimatorPass(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	result := &kube.Result{At: t0.Add(10 * time.Minute), View: &kube.View{Snapshot: estimateSnapshot(t0)}}
	reads := 0
	var shared map[string]scheduler.Estimate
	e := &estimator{
		share: func(est map[string]scheduler.Estimate) { shared = est },
		last:  func() *kube.Result { return result },
		medians: func(_ context.Context, since time.Time) ([]store.RuntimeMedian, error) {
			reads++
			if want := result.At.Add(-mediansWindow); !since.Equal(want) {
				t.Errorf("medians since %v, want %v", since, want)
			}
			return []store.RuntimeMedian{{Project: "team", Type: "Training", Median: time.Hour, Count: 5}}, nil
		},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if !e.pass(context.Background()) {
		t.Fatal("the first pass did not run")
	}
	est, ok := shared["uid-wait"]
	if !ok || !est.At.Equal(t0.Add(time.Hour)) {
		t.Errorf("estimate %+v, want the running Job's start plus the median hour, %v", est, t0.Add(time.Hour))
	}
	if e.pass(context.Background()) {
		t.Error("a pass ran again on the same cycle")
	}
	result = &kube.Result{At: result.At.Add(time.Second), View: result.View}
	if !e.pass(context.Background()) {
		t.Error("no pass on a newer cycle")
	}
	if reads != 1 {
		t.Errorf("medians read %d times in a minute, want once", reads)
	}
}

// The leader's estimates reach the records, which every replica reads: a pass's estimates are
// written with the next batch; a pass that changes nothing writes nothing; an estimate that
// goes (the workload no longer waits) is taken away; a new term writes them all again.
func TestEstimatesAreWrittenWithTheRecords(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	snap := estimateSnapshot(t0)
	var records []store.WorkloadRecord
	for _, w := range snap.Workloads {
		records = append(records, store.WorkloadRecord{UID: w.UID, Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, Phase: string(w.Phase), QueuedAt: w.QueuedAt})
	}
	if err := st.RecordWorkloads(ctx, records, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := newRecorder(ctx, st, log)
	if err != nil {
		t.Fatal(err)
	}
	result := &kube.Result{At: snap.Now, View: &kube.View{Snapshot: snap}}
	e := &estimator{last: func() *kube.Result { return result }, log: log,
		medians: func(context.Context, time.Time) ([]store.RuntimeMedian, error) {
			return []store.RuntimeMedian{{Project: "team", Type: "Training", Median: time.Hour, Count: 5}}, nil
		},
		share: func(est map[string]scheduler.Estimate) { rec.shareEstimates(est) }}
	recorded := func() store.WorkloadRecord {
		t.Helper()
		r, err := st.WorkloadRecord(ctx, "uid-wait")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	queued := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.estimates)
	}

	e.pass(ctx)
	rec.flush(ctx)
	want := t0.Add(time.Hour)
	if r := recorded(); r.EstimatedStartAt == nil || !r.EstimatedStartAt.Equal(want) || r.EstimateBasis == "" {
		t.Fatalf("after a pass the record's estimate is %v %q, want %v and its basis", r.EstimatedStartAt, r.EstimateBasis, want)
	}

	// A newer cycle, the same estimates: nothing to write.
	result = &kube.Result{At: result.At.Add(time.Second), View: result.View}
	e.pass(ctx)
	if n := queued(); n != 0 {
		t.Errorf("a pass that changed nothing queued %d estimates", n)
	}

	// The waiting workload has gone from the queue: its estimate is taken away.
	gone := snap
	gone.Workloads = snap.Workloads[:1]
	result = &kube.Result{At: result.At.Add(time.Second), View: &kube.View{Snapshot: gone}}
	e.pass(ctx)
	rec.flush(ctx)
	if r := recorded(); r.EstimatedStartAt != nil || r.EstimateBasis != "" {
		t.Errorf("no longer waiting, the record keeps the estimate %v %q", r.EstimatedStartAt, r.EstimateBasis)
	}

	// It waits again under a new leader, whose recorder has sent nothing yet: written again.
	if rec, err = newRecorder(ctx, st, log); err != nil {
		t.Fatal(err)
	}
	result = &kube.Result{At: result.At.Add(time.Second), View: &kube.View{Snapshot: snap}}
	e.pass(ctx)
	rec.flush(ctx)
	if r := recorded(); r.EstimatedStartAt == nil || !r.EstimatedStartAt.Equal(want) {
		t.Errorf("under a new term the record's estimate is %v, want %v", r.EstimatedStartAt, want)
	}
}
