package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/store"
)

// S25's priorityPolicy and priorityOffset on departments and projects, and S27's delays on
// projects: defaults, round trip, refusals with the field, null back to the default.
func TestPriorityFenceAndDelays(t *testing.T) {
	t.Parallel()
	st, _, dept, alpha := orgFixture(t)
	ctx := context.Background()
	if dept.PriorityPolicy != "fence" || dept.PriorityOffset != 0 {
		t.Fatalf("a new department is %q with offset %d; want fence, 0", dept.PriorityPolicy, dept.PriorityOffset)
	}
	if p := alpha.Policy; p.PriorityPolicy != "fence" || p.PriorityOffset != 0 || p.ReclaimMinRuntimeSeconds != 0 || p.PreemptionDelaySeconds != 0 {
		t.Fatalf("a new project's policy = %+v", p)
	}

	d, err := st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{PriorityPolicy: set("open"), PriorityOffset: set(-50)}, operator)
	if err != nil || d.PriorityPolicy != "open" || d.PriorityOffset != -50 {
		t.Fatalf("department after update: %q %d, %v", d.PriorityPolicy, d.PriorityOffset, err)
	}
	p, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Policy: store.PolicyUpdate{
		PriorityPolicy: set("open"), PriorityOffset: set(1000), ReclaimMinRuntimeSeconds: set(300), PreemptionDelaySeconds: set(60)}}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Policy; got.PriorityPolicy != "open" || got.PriorityOffset != 1000 || got.ReclaimMinRuntimeSeconds != 300 || got.PreemptionDelaySeconds != 60 {
		t.Fatalf("project policy = %+v", got)
	}
	if w := p.PriorityWarning(); !strings.Contains(w, "at least 1025, above very-high (150)") {
		t.Errorf("an open project with offset 1000 warns %q", w)
	}
	if w := d.PriorityWarning(); w != "" {
		t.Errorf("a negative offset warns %q", w)
	}
	if d, err := st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{PriorityOffset: set(100)}, operator); err != nil || d.PriorityWarning() != "" {
		t.Errorf("an open department with offset 100 (lowest 125) warns %q, %v", d.PriorityWarning(), err)
	}
	org, err := st.OrganizationSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range org.Departments {
		if o.ID == dept.ID && (o.PriorityPolicy != "open" || o.PriorityOffset != 100) {
			t.Errorf("the scheduler's snapshot reads department %+v", o)
		}
	}

	_, err = st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{PriorityPolicy: set("global")}, operator)
	wantErr(t, err, store.ErrInvalid, `priorityPolicy "global" is not valid`)
	for _, tc := range []struct {
		u        store.PolicyUpdate
		mentions string
	}{
		{store.PolicyUpdate{PriorityPolicy: set("default")}, `priorityPolicy "default" is not valid`},
		{store.PolicyUpdate{PriorityOffset: set(1 << 40)}, "priorityOffset is 1099511627776"},
		{store.PolicyUpdate{ReclaimMinRuntimeSeconds: set(-1)}, "reclaimMinRuntimeSeconds is -1"},
		{store.PolicyUpdate{PreemptionDelaySeconds: set(-2)}, "preemptionDelaySeconds is -2"},
	} {
		_, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Policy: tc.u}, operator)
		wantErr(t, err, store.ErrInvalid, tc.mentions)
	}

	d, err = st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{PriorityPolicy: store.Optional[string]{Set: true}}, operator)
	if w := d.PriorityWarning(); w != "" {
		t.Errorf("a fenced department with offset 100 warns %q", w)
	}
	if d, err := st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{PriorityOffset: set(151)}, operator); err != nil || !strings.Contains(d.PriorityWarning(), "at least 151") {
		t.Errorf("a fenced department with offset 151 warns %q, %v", d.PriorityWarning(), err)
	}
	if err != nil || d.PriorityPolicy != "fence" || d.PriorityOffset != 100 {
		t.Fatalf("null policy: %q %d, %v", d.PriorityPolicy, d.PriorityOffset, err)
	}
}
