package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

func set[T any](v T) store.Optional[T] { return store.Optional[T]{Set: true, Value: &v} }

func quota(pool string, deserved, limit int) store.QuotaInput {
	return store.QuotaInput{NodePoolName: pool, Deserved: deserved, Limit: &limit}
}

// orgFixture makes pool a100, department research (16 deserved in a100) and project alpha
// (10 deserved there, namespace team-alpha).
func orgFixture(t *testing.T) (*store.Store, store.NodePool, store.Department, store.Project) {
	t.Helper()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	pool, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set("a100"), LabelKey: set(store.NodePoolLabelKey)}, operator)
	if err != nil {
		t.Fatal(err)
	}
	dept, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: set("research"), Resources: set([]store.QuotaInput{quota("a100", 16, -1)})}, operator)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := st.CreateProject(ctx, store.ProjectUpdate{
		Name: set("alpha"), DepartmentID: set(dept.ID), Namespaces: set([]string{"team-alpha"}),
		Resources: set([]store.QuotaInput{quota("a100", 10, 12)}),
	}, operator)
	if err != nil {
		t.Fatal(err)
	}
	return st, pool, dept, proj
}

func wantErr(t *testing.T, err error, kind error, mentions ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("got %v, want a %v error", err, kind)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%q does not mention %q", err.Error(), m)
		}
	}
}

func TestDefaultNodePoolIsSeeded(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	pools, err := st.NodePools(context.Background(), listquery.Query{SortBy: "name"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 1 || pools[0].Name != "default" || pools[0].ID != store.SeedID("node-pool", "default") || pools[0].LabelKey != "" || pools[0].Placement != "binpack" {
		t.Fatalf("pools = %+v, want the seeded default pool only", pools)
	}
	err = st.DeleteNodePool(context.Background(), store.DefaultNodePoolID, operator)
	wantErr(t, err, store.ErrInvalid, "default")
	_, err = st.UpdateNodePool(context.Background(), store.DefaultNodePoolID, store.NodePoolUpdate{Name: set("other")}, operator)
	wantErr(t, err, store.ErrInvalid, "renamed")
	p, err := st.UpdateNodePool(context.Background(), store.DefaultNodePoolID, store.NodePoolUpdate{Placement: set("spread")}, operator)
	if err != nil || p.Placement != "spread" {
		t.Fatalf("placement of default = %v, %v", p.Placement, err)
	}
}

func TestProjectQuotaStaysInsideDepartmentShare(t *testing.T) {
	t.Parallel()
	st, _, dept, alpha := orgFixture(t)
	ctx := context.Background()
	_, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID), Resources: set([]store.QuotaInput{quota("a100", 10, -1)})}, operator)
	wantErr(t, err, store.ErrInvalid, "department research has 16 deserved GPUs in pool a100; its projects would have 20, 4 more")
	if _, err := st.Project(ctx, alpha.ID); err != nil {
		t.Fatal(err)
	}
	ps, _, _ := st.Projects(ctx, listquery.Query{SortBy: "name", Limit: 50})
	if len(ps) != 1 {
		t.Fatalf("the refused project was half-written: %d projects", len(ps))
	}
	// Lowering the department below its projects is refused the other way round.
	_, err = st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{Resources: set([]store.QuotaInput{quota("a100", 8, -1)})}, operator)
	wantErr(t, err, store.ErrInvalid, "department research would have 8 deserved GPUs in pool a100; its projects have 10, 2 more")
	// A pool the department has no quota in gives its projects nothing to deserve.
	_, err = st.ReplaceProjectQuotas(ctx, alpha.ID, []store.QuotaInput{quota("default", 1, -1)}, operator)
	wantErr(t, err, store.ErrInvalid, "0 deserved GPUs in pool default")
	p, err := st.ReplaceProjectQuotas(ctx, alpha.ID, []store.QuotaInput{quota("a100", 16, -1)}, operator)
	if err != nil || len(p.Quotas) != 1 || p.Quotas[0].Deserved != 16 || p.Quotas[0].Limit != -1 || p.Quotas[0].OverQuotaWeight != 2 {
		t.Fatalf("exactly the department's share: %+v, %v", p.Quotas, err)
	}
}

func TestQuotaNumbersAreChecked(t *testing.T) {
	t.Parallel()
	st, _, _, alpha := orgFixture(t)
	ctx := context.Background()
	neg := -1
	for _, tc := range []struct {
		in       store.QuotaInput
		mentions string
	}{
		{quota("a100", 4, 2), "limit 2 GPUs in pool a100 is below the deserved 4, by 2"},
		{quota("a100", -1, -1), "deserved GPUs in pool a100 is -1"},
		{quota("a100", 1, -5), "limit in pool a100 is -5"},
		{store.QuotaInput{NodePoolName: "a100", Deserved: 1, OverQuotaWeight: &neg}, "over-quota weight in pool a100 is -1"},
		{quota("h100", 1, -1), "no node pool named h100"},
		{store.QuotaInput{Deserved: 1}, "nodePool.id or nodePool.name"},
	} {
		_, err := st.ReplaceProjectQuotas(ctx, alpha.ID, []store.QuotaInput{tc.in}, operator)
		wantErr(t, err, store.ErrInvalid, tc.mentions)
	}
	_, err := st.ReplaceProjectQuotas(ctx, alpha.ID, []store.QuotaInput{quota("a100", 1, -1), quota("a100", 2, -1)}, operator)
	wantErr(t, err, store.ErrInvalid, "more than once")
}

func TestNamespacesBelongToOneProject(t *testing.T) {
	t.Parallel()
	st, _, dept, _ := orgFixture(t)
	ctx := context.Background()
	reader := operator
	reader.MayReadProject = func(uuid.UUID, uuid.UUID) bool { return true }
	_, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID), Namespaces: set([]string{"team-beta", "team-alpha"})}, reader)
	wantErr(t, err, store.ErrConflict, "namespace team-alpha already belongs to project alpha")
	// A caller who may not read the owner is not told its name.
	_, err = st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID), Namespaces: set([]string{"team-alpha"})}, operator)
	wantErr(t, err, store.ErrConflict, "namespace team-alpha already belongs to another project")
	if strings.Contains(err.Error(), "project alpha") {
		t.Errorf("the refusal names the owner to a caller who may not read it: %v", err)
	}
	_, err = st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID), Namespaces: set([]string{"Team_Beta"})}, operator)
	wantErr(t, err, store.ErrInvalid, "Team_Beta")
	_, err = st.CreateProject(ctx, store.ProjectUpdate{Name: set("alpha"), DepartmentID: set(dept.ID)}, operator)
	wantErr(t, err, store.ErrConflict, "project named alpha already exists")
	_, err = st.CreateProject(ctx, store.ProjectUpdate{Name: set("gamma"), DepartmentID: set(uuid.New())}, operator)
	wantErr(t, err, store.ErrInvalid, "departmentId")
}

// TestNamespaceRulesRefuseReservedAndTooMany: one decision (NamespaceRules.CheckNamespaces)
// refuses system namespaces, Arbiter's own and lists over the bound, as invalid on field
// "namespaces", and the store asks it on every project create and change.
func TestNamespaceRulesRefuseReservedAndTooMany(t *testing.T) {
	t.Parallel()
	st, _, dept, alpha := orgFixture(t)
	ctx := context.Background()
	st.SetNamespaceRules(store.NamespaceRules{Reserved: append(slices.Clone(store.SystemNamespaces), "shared"), Own: "arbiter", MaxPerProject: 3})
	for _, tc := range []struct {
		list     []string
		mentions string
	}{
		{[]string{"kube-system"}, "namespace kube-system is a Kubernetes system namespace; a project may not claim it"},
		{[]string{"ok", "kube-node-lease"}, "namespace kube-node-lease is a Kubernetes system namespace"},
		{[]string{"default"}, "namespace default is a Kubernetes system namespace"},
		{[]string{"arbiter"}, "namespace arbiter is Arbiter's own namespace; a project may not claim it"},
		{[]string{"shared"}, "namespace shared is reserved by the operator (--reserved-namespaces)"},
		{[]string{"a", "b", "c", "d"}, "a project has at most 3 namespaces; this asks for 4"},
	} {
		_, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Namespaces: set(tc.list)}, operator)
		wantErr(t, err, store.ErrInvalid, tc.mentions)
		if f := store.FieldOf(err); f != "namespaces" {
			t.Errorf("%v: field %q, want namespaces", tc.list, f)
		}
		_, err = st.CreateProject(ctx, store.ProjectUpdate{Name: set("beta"), DepartmentID: set(dept.ID), Namespaces: set(tc.list)}, operator)
		wantErr(t, err, store.ErrInvalid, tc.mentions)
	}
	p, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Namespaces: set([]string{"a", "b", "c"})}, operator)
	if err != nil || len(p.Namespaces) != 3 {
		t.Fatalf("3 namespaces within the bound: %v %v", p.Namespaces, err)
	}
	if r := store.DefaultNamespaceRules(); r.MaxPerProject != 20 || !slices.Equal(r.Reserved, store.SystemNamespaces) {
		t.Errorf("default rules %+v", r)
	}
}

func TestDeletesRefuseWhatIsInUse(t *testing.T) {
	t.Parallel()
	st, pool, dept, alpha := orgFixture(t)
	ctx := context.Background()
	wantErr(t, st.DeleteDepartment(ctx, dept.ID, operator), store.ErrConflict, "department research has 1 project (alpha)")
	wantErr(t, st.DeleteNodePool(ctx, pool.ID, operator), store.ErrConflict, "department research, project alpha")
	if err := st.DeleteProject(ctx, alpha.ID, operator); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{Resources: set([]store.QuotaInput{})}, operator); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteNodePool(ctx, pool.ID, operator); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteDepartment(ctx, dept.ID, operator); err != nil {
		t.Fatal(err)
	}
	wantErr(t, st.DeleteDepartment(ctx, dept.ID, operator), store.ErrNotFound)
}

func TestProjectPolicy(t *testing.T) {
	t.Parallel()
	st, _, _, alpha := orgFixture(t)
	ctx := context.Background()
	if p := alpha.Policy; !p.AllowPriorityChange || !p.AllowPreemptibilityChange || p.PreemptionOrder != "oldest" || p.PreemptionMode != "terminate" || p.Queueing != "best-effort" || p.MinRuntimeSeconds != 0 || p.DefaultPriorityID != nil {
		t.Fatalf("default policy = %+v", p)
	}
	high := store.SeedID("priority", "high")
	p, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Policy: store.PolicyUpdate{
		DefaultPriorityID: set(high), AllowPriorityChange: set(false), AllowPreemptibilityChange: set(false), MinPriority: set("low"), MaxPriority: set("very-high"),
		PreemptionOrder: set("newest"), PreemptionMode: set("suspend"), MinRuntimeSeconds: set(600), Queueing: set("strict"),
	}}, operator)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Policy; *got.DefaultPriorityName != "high" || got.AllowPriorityChange || got.AllowPreemptibilityChange || *got.MinPriority != "low" || *got.MaxPriority != "very-high" ||
		got.PreemptionOrder != "newest" || got.PreemptionMode != "suspend" || got.MinRuntimeSeconds != 600 || got.Queueing != "strict" {
		t.Fatalf("policy = %+v", got)
	}
	for _, tc := range []struct {
		u        store.PolicyUpdate
		mentions string
	}{
		{store.PolicyUpdate{MinPriority: set("urgent")}, `minPriority "urgent" is not in the priority dictionary`},
		{store.PolicyUpdate{MinPriority: set("very-high"), MaxPriority: set("high")}, "minPriority very-high (150) is above maxPriority high (125)"},
		{store.PolicyUpdate{MaxPriority: set("medium")}, "default priority high (125) is above maxPriority medium (80)"},
		{store.PolicyUpdate{DefaultPriorityID: set(uuid.New())}, "defaultPriorityId"},
		{store.PolicyUpdate{PreemptionOrder: set("random")}, "random"},
		{store.PolicyUpdate{PreemptionMode: set("pause")}, "pause"},
		{store.PolicyUpdate{Queueing: set("fifo")}, "fifo"},
		{store.PolicyUpdate{MinRuntimeSeconds: set(-1)}, "minRuntimeSeconds is -1"},
	} {
		_, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Policy: tc.u}, operator)
		wantErr(t, err, store.ErrInvalid, tc.mentions)
	}
	// Null (Set without a value) returns a field to its default.
	p, err = st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{Policy: store.PolicyUpdate{
		DefaultPriorityID: store.Optional[uuid.UUID]{Set: true}, Queueing: store.Optional[string]{Set: true}, MaxPriority: store.Optional[string]{Set: true},
	}}, operator)
	if err != nil || p.DefaultPriorityID != nil || p.Queueing != "best-effort" || p.MaxPriority != nil || *p.MinPriority != "low" {
		t.Fatalf("back to defaults: %+v, %v", p.Policy, err)
	}
}

func TestOrganizationSnapshotAndNotifications(t *testing.T) {
	t.Parallel()
	st, pool, dept, alpha := orgFixture(t)
	ctx := context.Background()
	var heard []string
	st.OnConfigChange(func(aggregate string) { heard = append(heard, aggregate) })

	o, err := st.OrganizationSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.NodePools) != 2 || len(o.Departments) != 1 || len(o.Projects) != 1 {
		t.Fatalf("snapshot = %+v", o)
	}
	got := o.Projects[0]
	if got.DepartmentName != "research" || got.Namespaces[0] != "team-alpha" || got.Quotas[0].NodePoolName != "a100" || got.Quotas[0].Limit != 12 {
		t.Errorf("project in snapshot = %+v", got)
	}
	if len(got.EffectiveNodePools) != 2 || got.EffectiveNodePools[0].Name != "a100" || got.EffectiveNodePools[1].Name != "default" {
		t.Errorf("default node-pool order = %+v, want a100 then default", got.EffectiveNodePools)
	}
	p, err := st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{NodePools: set([]uuid.UUID{store.DefaultNodePoolID, pool.ID})}, operator)
	if err != nil || p.EffectiveNodePools[0].Name != "default" || p.EffectiveNodePools[1].Name != "a100" {
		t.Fatalf("explicit order = %+v, %v", p.EffectiveNodePools, err)
	}
	_, err = st.UpdateProject(ctx, alpha.ID, store.ProjectUpdate{NodePools: set([]uuid.UUID{uuid.New()})}, operator)
	wantErr(t, err, store.ErrInvalid, "nodePools")
	if _, err := st.UpdateDepartment(ctx, dept.ID, store.DepartmentUpdate{Name: set("science")}, operator); err != nil {
		t.Fatal(err)
	}
	if strings.Join(heard, ",") != "projects,departments" {
		t.Errorf("the in-process hook heard %v, want projects then departments (a refused change says nothing)", heard)
	}
	entries, err := st.AuditEntries(ctx, 1)
	if err != nil || entries[0].EntityType != "department" || entries[0].Changes["name"] == nil {
		t.Errorf("audit row = %+v, %v", entries, err)
	}
}

// A create's audit row says what the new object holds, with nothing before: no placeholder a
// create starts from shows as a "from" value.
func TestCreatesAreAuditedWithNothingBefore(t *testing.T) {
	t.Parallel()
	st, _, dept, proj := orgFixture(t)
	entries, err := st.AuditEntries(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		if e.Action != "create" || (e.EntityID != dept.ID.String() && e.EntityID != proj.ID.String()) {
			continue
		}
		seen++
		if len(e.Changes) == 0 {
			t.Errorf("the %s create records no changes", e.EntityType)
		}
		for field, c := range e.Changes {
			m, _ := c.(map[string]any)
			if m == nil || m["from"] != nil {
				t.Errorf("%s create: %s = %v, want from null", e.EntityType, field, c)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("found %d create rows for the department and the project, want 2", seen)
	}
}
