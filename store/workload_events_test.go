package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestPriorityChangeIsRecordedOnce: a change made through the API is recorded with its
// actor; when the scheduler then sees the new label and reports the same change, the
// timeline keeps the person's entry only. A later change the scheduler sees on its own (a
// label edited with kubectl), or one to another priority, is recorded.
func TestPriorityChangeIsRecordedOnce(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	now := time.Now()
	rec := store.WorkloadRecord{UID: "uid-1", Namespace: "team-a", Name: "train", Kind: "Job", APIGroup: "batch", TypeName: "Job",
		PriorityName: "low", PriorityValue: 40, Phase: "Running", Gang: 1, RequestedGPUs: 1, QueuedAt: now.Add(-time.Hour)}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatal(err)
	}
	person := store.WorkloadEvent{WorkloadUID: "uid-1", Kind: "PriorityChanged", Actor: "Ann", At: now.Add(-time.Minute),
		Message: "Changed priority from low to medium-high by Ann."}
	if err := st.AddWorkloadEvent(ctx, person, store.Actor{Subject: "ann", SubjectType: "user"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	seen := func(at time.Time, message string) store.WorkloadEvent {
		return store.WorkloadEvent{WorkloadUID: "uid-1", Kind: "PriorityChanged", At: at, Message: message}
	}
	for _, e := range []store.WorkloadEvent{
		seen(now, "Changed priority from low to medium."),                          // not what Ann did: "medium" is not "medium-high"
		seen(now, "Changed priority from low to medium-high."),                     // what Ann did: dropped
		seen(now.Add(20*time.Minute), "Changed priority from medium-high to low."), // kubectl, later
	} {
		if err := st.RecordWorkloads(ctx, nil, []store.WorkloadEvent{e}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := st.WorkloadEvents(ctx, "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Actor+": "+e.Message)
	}
	want := []string{
		"Ann: Changed priority from low to medium-high by Ann.",
		"scheduler: Changed priority from low to medium.",
		"scheduler: Changed priority from medium-high to low.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}
