package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/lifecycle"
	"github.com/arbiterhq/arbiter/store"
)

// The records the scheduler writes name their project by id, as the configuration it schedules
// with has it: a renamed project's workload keeps that id, a workload of no project has none.
// (Who may see a workload is decided on that id: web TestWorkloadsBelongToTheirProjectByID.)
func TestRecordsNameTheirProjectByID(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	r, err := newRecorder(ctx, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// record observes one cycle of the configuration as it is now, with the workloads pending
	// in the projects named, and writes what it records.
	record := func(projectOf map[string]string) {
		t.Helper()
		settings, err := loadSettings(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		snap := &scheduler.Snapshot{Now: now, Projects: settings.Projects}
		plan := &scheduler.Plan{}
		var rebuilt []string
		for _, uid := range []string{"uid-in-alpha", "uid-of-none"} { // sorted, as a snapshot's workloads are
			snap.Workloads = append(snap.Workloads, scheduler.Workload{UID: uid, Namespace: "ns", Name: uid, Kind: "Job", Group: "batch",
				Project: projectOf[uid], Phase: scheduler.PhasePending, QueuedAt: now})
			plan.Pending = append(plan.Pending, scheduler.PendingWorkload{Workload: uid, Namespace: "ns", Name: uid, Project: projectOf[uid]})
			rebuilt = append(rebuilt, uid)
		}
		r.merge(r.lifecycle.Observe(lifecycle.Cycle{At: now, Snapshot: snap, Plan: plan, Rebuilt: rebuilt,
			Owner: func(string) lifecycle.Owner { return lifecycle.Owner{} }}))
		r.flush(ctx)
	}
	projectID := func(uid string) *uuid.UUID {
		t.Helper()
		rec, err := st.WorkloadRecord(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		return rec.ProjectID
	}

	record(map[string]string{"uid-in-alpha": "alpha"})
	if got := projectID("uid-in-alpha"); got == nil || *got != alpha.ID {
		t.Errorf("a workload of alpha is recorded with project id %v, want %s", got, alpha.ID)
	}
	if got := projectID("uid-of-none"); got != nil {
		t.Errorf("a workload of no project is recorded with project id %s, want none", got)
	}

	// Renamed, and another project made with the old name: the workload, recorded again under
	// the new name, keeps its project's id.
	if _, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Name: text("alpha-renamed")}, system); err != nil {
		t.Fatal(err)
	}
	again, err := st.CreateProject(ctx, store.ProjectUpdate{Name: text("alpha"), DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &dept.ID}}, system)
	if err != nil {
		t.Fatal(err)
	}
	r.lifecycle = lifecycle.NewState() // a new leader: it records every workload again
	record(map[string]string{"uid-in-alpha": "alpha-renamed"})
	if got := projectID("uid-in-alpha"); got == nil || *got != alpha.ID {
		t.Errorf("after the rename the workload is recorded with project id %v, want %s (not the new alpha's %s)", got, alpha.ID, again.ID)
	}
}
