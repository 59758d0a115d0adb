package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
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
	if err := st.AddWorkloadEvents(ctx, []store.WorkloadEvent{person}, store.Actor{Subject: "ann", SubjectType: "user"}, nil, nil); err != nil {
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

// TestAChangeIsRecordedOnceWhenTheSchedulerSeesItFirst: the scheduler can see the new label
// (the patch is made inside the person's transaction) and write its own PriorityChanged before
// that transaction commits. Its write then waits for the person's change, finds it and is
// dropped: the timeline says the change once, by the person.
func TestAChangeIsRecordedOnceWhenTheSchedulerSeesItFirst(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := time.Now()
	rec := store.WorkloadRecord{UID: "uid-1", Namespace: "team-a", Name: "train", Kind: "Job", APIGroup: "batch", TypeName: "Job",
		PriorityName: "low", PriorityValue: 40, Phase: "Running", Gang: 1, RequestedGPUs: 1, QueuedAt: now.Add(-time.Hour)}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{rec}, nil); err != nil {
		t.Fatal(err)
	}
	// The scheduler's write: the record with the new priority and its event, as the recorder
	// sends them after the cycle that saw the label.
	seen := rec
	seen.PriorityName, seen.PriorityValue = "high", 125
	schedulerWrote := make(chan error, 1)
	person := store.WorkloadEvent{WorkloadUID: "uid-1", Kind: "PriorityChanged", Actor: "Ann", Message: "Changed priority from low to high by Ann."}
	err := st.AddWorkloadEvents(ctx, []store.WorkloadEvent{person}, store.Actor{Subject: "ann", SubjectType: "user"}, nil, func(context.Context) error {
		// The label is on the cluster now; the scheduler's cycle sees it and the recorder
		// writes before this transaction commits.
		go func() {
			schedulerWrote <- st.RecordWorkloads(ctx, []store.WorkloadRecord{seen},
				[]store.WorkloadEvent{{WorkloadUID: "uid-1", Kind: "PriorityChanged", At: time.Now(), Message: "Changed priority from low to high."}})
		}()
		// Give it the time it takes when nothing holds it back; a write that waits for this
		// transaction waits on.
		select {
		case err := <-schedulerWrote:
			schedulerWrote <- err
		case <-time.After(2 * time.Second):
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-schedulerWrote; err != nil {
		t.Fatal(err)
	}
	events, err := st.WorkloadEvents(ctx, "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Kind+" "+e.Actor+": "+e.Message)
	}
	if diff := cmp.Diff([]string{"PriorityChanged Ann: Changed priority from low to high by Ann."}, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}
