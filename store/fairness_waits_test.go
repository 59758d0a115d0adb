package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestLedgerWorkloadsAreTheProjectsWorkloadsOfThePeriodWithTheirEvictions: the workloads of
// one project that lived during the period, with their admissions and evictions before its
// end, each eviction naming the preemptor's project; workloads finished before the period, queued
// after it, or of another project are not read.
func TestLedgerWorkloadsAreTheProjectsWorkloadsOfThePeriodWithTheirEvictions(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	alpha, beta := uuid.New(), uuid.New()
	finishedBefore := from.Add(-time.Hour)
	record := func(uid, name string, project uuid.UUID, projectName string, queued time.Time, finished *time.Time, reason string) store.WorkloadRecord {
		phase := "Running"
		if finished != nil {
			phase = "Completed"
		}
		return store.WorkloadRecord{UID: uid, Namespace: "team", Name: name, Kind: "Job", APIGroup: "batch", ProjectID: &project,
			ProjectName: projectName, Phase: phase, Reason: reason, Gang: 2, RequestedGPUs: 4, QueuedAt: queued, FinishedAt: finished}
	}
	records := []store.WorkloadRecord{
		record("train", "train", alpha, "alpha", from.Add(-2*time.Hour), nil, ""),
		record("waits", "waits", alpha, "alpha", from.Add(3*time.Hour), nil, "OverLimit"),
		record("old", "old", alpha, "alpha", from.Add(-3*time.Hour), &finishedBefore, ""),
		record("later", "later", alpha, "alpha", to.Add(time.Hour), nil, ""),
		record("thief", "thief", beta, "beta", from, nil, ""),
	}
	events := []store.WorkloadEvent{
		{WorkloadUID: "train", Kind: "Admitted", At: from.Add(-2 * time.Hour)},
		{WorkloadUID: "train", Kind: "Reclaimed", At: from.Add(time.Hour), PreemptorUID: "thief", Reason: "S17"},
		{WorkloadUID: "train", Kind: "Admitted", At: from.Add(2 * time.Hour)},
		{WorkloadUID: "train", Kind: "Preempted", At: to.Add(time.Minute)}, // after the period
	}
	if err := st.RecordWorkloads(ctx, records, events); err != nil {
		t.Fatal(err)
	}
	got, more, err := st.LedgerWorkloads(ctx, alpha, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.LedgerWorkload{
		{UID: "waits", Name: "team/waits", QueuedAt: from.Add(3 * time.Hour), GPUs: 4, Gang: 2, Reason: "OverLimit"},
		{UID: "train", Name: "team/train", QueuedAt: from.Add(-2 * time.Hour), GPUs: 4, Gang: 2, Events: []store.LedgerEvent{
			{At: from.Add(-2 * time.Hour), Kind: "Admitted"},
			{At: from.Add(time.Hour), Kind: "Reclaimed", PreemptorProject: "beta"},
			{At: from.Add(2 * time.Hour), Kind: "Admitted"},
		}},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("ledger workloads (-want +got):\n%s", diff)
	}
	if more {
		t.Errorf("more = true for two workloads")
	}
	if _, _, err := st.LedgerWorkloads(ctx, alpha, to, from); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a period ending before it starts: %v, want ErrInvalid", err)
	}
}
