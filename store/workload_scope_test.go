package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
)

// TestWorkloadScopeIsByProjectID: every reading of workloads narrowed to a caller's projects —
// the list, the keyset walk of the export, the list's count, the Overview's counts, the scheduling events —
// selects by project id. A workload recorded under the same name by an older project with
// another id, and one of no project, are outside a scope that holds the project that has the
// name now.
func TestWorkloadScopeIsByProjectID(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	system := store.Actor{Subject: "test", SubjectType: "system"}
	alpha := projectInDepartment(ctx, t, st, system, "ops", "alpha")
	gone := uuid.New() // a deleted project that was named alpha too
	now := time.Now()
	rec := func(uid string, project *uuid.UUID) store.WorkloadRecord {
		return store.WorkloadRecord{UID: uid, Namespace: "ns", Name: uid, Kind: "Job", ProjectID: project, ProjectName: "alpha",
			Phase: "Pending", Reason: "InsufficientCapacity", QueuePosition: 1, Gang: 1, QueuedAt: now.Add(-time.Hour)}
	}
	events := []store.WorkloadEvent{}
	for _, uid := range []string{"current", "old", "none"} {
		events = append(events, store.WorkloadEvent{WorkloadUID: uid, At: now, Kind: "Preempted", Reason: "S16", Message: uid + " was preempted."})
	}
	if err := st.RecordWorkloads(ctx, []store.WorkloadRecord{rec("current", &alpha.ID), rec("old", &gone), {UID: "none", Namespace: "ns",
		Name: "none", Kind: "Job", ProjectName: "alpha", Phase: "Pending", Gang: 1, QueuedAt: now.Add(-time.Hour)}}, events); err != nil {
		t.Fatal(err)
	}
	refs, err := st.ProjectRefs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scope := store.WorkloadScope{Projects: refs} // alpha as it is now

	list, _, err := st.VisibleWorkloads(ctx, listquery.Query{Limit: 10}, true, scope)
	if err != nil {
		t.Fatal(err)
	}
	walked, _, err := st.VisibleWorkloadsAfter(ctx, listquery.Query{}, true, scope, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	counted, err := st.CountVisibleWorkloads(ctx, listquery.Query{}, true, scope)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := st.CountWorkloads(ctx, scope, now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := st.SchedulingEvents(ctx, store.SchedulingEventFilter{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	byName, _, err := st.SchedulingEvents(ctx, store.SchedulingEventFilter{Scope: store.WorkloadScope{All: true}, Project: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	uids := func(rs []store.WorkloadRecord) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.UID)
		}
		return strings.Join(out, ",")
	}
	eventUIDs := func(es []store.SchedulingEvent) string {
		var out []string
		for _, e := range es {
			out = append(out, e.WorkloadUID)
		}
		return strings.Join(out, ",")
	}
	got := map[string]any{"list": uids(list), "walk": uids(walked), "counted": counted, "pending": counts.Phases["Pending"],
		"preempted since": counts.Events["Preempted"], "events": eventUIDs(evs), "events of project alpha": eventUIDs(byName)}
	want := map[string]any{"list": "current", "walk": "current", "counted": 1, "pending": 1,
		"preempted since": 1, "events": "current", "events of project alpha": "current"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what a scope of alpha reads (-want +got):\n%s", d)
	}
}

// projectInDepartment makes a department and a project in it.
func projectInDepartment(ctx context.Context, t *testing.T, st *store.Store, by store.Actor, department, project string) store.Project {
	t.Helper()
	dept, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: store.Optional[string]{Set: true, Value: ptr.To(department)}}, by)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, store.ProjectUpdate{Name: store.Optional[string]{Set: true, Value: ptr.To(project)},
		DepartmentID: store.Optional[uuid.UUID]{Set: true, Value: &dept.ID}}, by)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
