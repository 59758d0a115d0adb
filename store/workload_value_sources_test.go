package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/go-cmp/cmp"
)

// The record keeps where the workload's priority and preemptibility came from, as the leader
// last resolved them: a later record replaces the sentences, and one longer than the column's
// bound is cut to it rather than failing the batch.
func TestARecordSaysWhereItsPriorityAndPreemptibilityCameFrom(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := store.WorkloadRecord{UID: "u1", Namespace: "team-a", Name: "train", Kind: "Job", APIGroup: "batch",
		TypeName: "Standard training", PriorityName: "high", PriorityValue: 125, Preemptibility: "preemptible",
		PriorityFrom:       "asked for with the label priorityClassName on the Job",
		PreemptibilityFrom: "the default of category Train",
		Phase:              "Pending", Gang: 1, RequestedGPUs: 1, QueuedAt: time.Now()}
	type from struct{ Priority, Preemptibility string }
	read := func() from {
		t.Helper()
		got, err := st.WorkloadRecord(ctx, "u1")
		if err != nil {
			t.Fatalf("WorkloadRecord: %v", err)
		}
		return from{got.PriorityFrom, got.PreemptibilityFrom}
	}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatalf("RecordWorkloads: %v", err)
	}
	if diff := cmp.Diff(from{"asked for with the label priorityClassName on the Job", "the default of category Train"}, read()); diff != "" {
		t.Errorf("first record (-want +got):\n%s", diff)
	}

	rec.PriorityFrom = "project vision's default; the label priorityClassName on the Job was ignored: project vision does not allow changing priority"
	rec.PreemptibilityFrom = strings.Repeat("é", store.MaxFromBytes) // twice the bound in bytes
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatalf("RecordWorkloads again: %v", err)
	}
	want := from{rec.PriorityFrom, strings.Repeat("é", store.MaxFromBytes/2)}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("second record (-want +got):\n%s", diff)
	}
}
