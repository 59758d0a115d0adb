package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// A workload submitted through Arbiter is recorded with its project at once. The scheduler
// reloads its settings a moment after a project is made, so its first record of the workload
// can see no project for the namespace: that record must not take away the project the
// submission gave (the workload would vanish from its project's members' lists until the
// next reload). A record that names a project replaces it as before.
func TestASchedulerRecordWithoutAProjectKeepsTheSubmittedOne(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	system := store.Actor{Subject: "test", SubjectType: "system"}
	project := projectInDepartment(ctx, t, st, system, "ops", "fresh")
	now := time.Now()
	submitted := store.WorkloadRecord{UID: "w", Namespace: "fresh", Name: "train", Kind: "Job", ProjectID: &project.ID,
		ProjectName: "fresh", DepartmentName: "ops", Phase: "Pending", Gang: 1, QueuedAt: now, Submitter: "alice"}
	if err := st.RecordSubmission(ctx, submitted, system, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	lagging := submitted
	lagging.ProjectID, lagging.ProjectName, lagging.DepartmentName, lagging.Reason = nil, "", "", "NoProject"
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{lagging}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := st.WorkloadRecord(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if r.ProjectID == nil || *r.ProjectID != project.ID || r.ProjectName != "fresh" || r.DepartmentName != "ops" {
		t.Errorf("after a record with no project: project %v %q, department %q; want the submitted %s fresh, ops",
			r.ProjectID, r.ProjectName, r.DepartmentName, project.ID)
	}
	other := uuid.New()
	moved := submitted
	moved.ProjectID, moved.ProjectName = &other, "elsewhere"
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{moved}, nil); err != nil {
		t.Fatal(err)
	}
	if r, err = st.WorkloadRecord(ctx, "w"); err != nil || r.ProjectID == nil || *r.ProjectID != other || r.ProjectName != "elsewhere" {
		t.Errorf("a record that names a project: %v %q (%v), want %s elsewhere", r.ProjectID, r.ProjectName, err, other)
	}
}
