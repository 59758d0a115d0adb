package store_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"k8s.io/utils/ptr"
)

// The migrations seed the cluster default by name; it must be the core's, with the value
// the core falls back to when the dictionary lacks it.
func TestSeededClusterDefaultIsTheCoresClusterDefault(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t))
	prios, err := st.Priorities(context.Background(), listquery.Query{})
	if err != nil {
		t.Fatal(err)
	}
	seeded := store.SchedulingCatalog(prios, nil, nil)
	got, ok := seeded.Priority(scheduler.ClusterDefaultPriority)
	if !ok {
		t.Fatalf("the seeded dictionary has no %q, the core's cluster default", scheduler.ClusterDefaultPriority)
	}
	fallback := scheduler.NewCatalog(nil, nil, nil).Resolve(&scheduler.Workload{}, scheduler.Policy{}).Priority
	if diff := cmp.Diff(fallback, got); diff != "" {
		t.Errorf("seeded cluster default vs the core's fallback (-core +seeded):\n%s", diff)
	}
}

// effective is what a workload type's defaults come to: its priority and preemptibility.
type effective struct {
	Priority       string
	Value          int32
	Preemptibility string
}

// The workload types list computes its effective priority and preemptibility in SQL, so that
// it can sort and filter by them; the core (scheduler.Catalog.PolicyDefaults) decides them for
// the scheduler, submissions and the Submit page. For generated organizations (categories'
// defaults, types with and without their own priority, preemptibility and category, projects
// with and without a default priority, a range, and changes allowed or forbidden) the SQL
// answers what the core answers for every type under every project's policy that leaves the
// type's defaults as they are (no default priority of its own, a range the type's priority is
// within): the core alone answers for the others.
func TestEffectiveValuesInSQLAreTheCores(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= typeSettingsSeeds; seed++ {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			st := store.New(testdb.New(t))
			ctx := context.Background()
			org := generateOrganization(t, st, seed)

			prios, err := st.Priorities(ctx, listquery.Query{})
			if err != nil {
				t.Fatal(err)
			}
			cats, err := st.Categories(ctx, listquery.Query{})
			if err != nil {
				t.Fatal(err)
			}
			types, err := st.WorkloadTypes(ctx, listquery.Query{}, false)
			if err != nil {
				t.Fatal(err)
			}
			catalog := store.SchedulingCatalog(prios, cats, types)
			policies := []*store.Project{nil} // no project: the zero policy
			for i := range org {
				policies = append(policies, &org[i])
			}
			compared := 0
			for _, typ := range types {
				sql := effective{typ.EffectivePriorityName, int32(typ.EffectivePriorityValue), typ.EffectivePreemptibility}
				for _, p := range policies {
					policy := scheduler.Policy{}
					if p != nil {
						policy = p.Policy.Scheduling()
					}
					sqlPrio, _ := catalog.Priority(sql.Priority)
					if policy.DefaultPriority != "" || !catalog.WithinRange(sqlPrio, policy) {
						continue
					}
					prio, pre := catalog.PolicyDefaults(typ.Name, typ.Group, policy)
					if diff := cmp.Diff(effective{prio.Name, prio.Value, string(pre)}, sql); diff != "" {
						t.Errorf("type %s/%s (category %q, priority %q, preemptibility %q) in %s (-core +SQL):\n%s", typ.Group, typ.Name,
							ptr.Deref(typ.CategoryName, ""), ptr.Deref(typ.PriorityName, ""), ptr.Deref(typ.Preemptibility, ""), projectName(p), diff)
					}
					compared++
				}
			}
			if compared <= len(types) { // each type under no project, and some under projects
				t.Errorf("compared %d type × policy pairs of %d types: no project's policy left a type's defaults as they are", compared, len(types))
			}
		})
	}
}

func projectName(p *store.Project) string {
	if p == nil {
		return "no project"
	}
	return "project " + p.Name
}

// typeSettings are the settings a workload type may have: no category or one of the three
// seeded ones, no priority of its own or one of the seven seeded, no preemptibility of its
// own or one of the three. The types of the organizations of typeSettingsSeeds seeds take
// them in turn, so that together they have every one.
const (
	typeSettings      = 4 * 8 * 4
	typeSettingsSeeds = 4 // 4 seeds × 37 seeded types ≥ 128 settings
)

// generateOrganization gives the seeded categories random defaults, each workload type the
// next of typeSettings (the seed says where to start), and makes projects with random
// policies.
func generateOrganization(t *testing.T, st *store.Store, seed uint64) []store.Project {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 28))
	prios, err := st.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		t.Fatal(err)
	}
	pre := []string{store.Preemptible, store.NonPreemptible, store.SemiPreemptible}
	cats, err := st.Categories(ctx, listquery.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cats {
		if _, err := st.UpdateCategory(ctx, c.ID, store.CategoryUpdate{DefaultPriorityID: &prios[r.IntN(len(prios))].ID,
			DefaultPreemptibility: &pre[r.IntN(len(pre))]}, operator); err != nil {
			t.Fatal(err)
		}
	}
	types, err := st.WorkloadTypes(ctx, listquery.Query{SortBy: "name"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(types)*typeSettingsSeeds < typeSettings {
		t.Fatalf("%d types in %d organizations cannot take all %d settings", len(types), typeSettingsSeeds, typeSettings)
	}
	for i, typ := range types {
		setting := ((int(seed)-1)*len(types) + i) % typeSettings
		category, priority, preemptibility := setting%4, setting/4%8, setting/32
		u := store.WorkloadTypeUpdate{CategoryID: store.Optional[uuid.UUID]{Set: true}, PriorityID: store.Optional[uuid.UUID]{Set: true},
			Preemptibility: store.Optional[string]{Set: true}} // all null: no category, the category's or the cluster's defaults
		if category > 0 {
			u.CategoryID = set(cats[category-1].ID)
		}
		if priority > 0 {
			u.PriorityID = set(prios[priority-1].ID)
		}
		if preemptibility > 0 {
			u.Preemptibility = set(pre[preemptibility-1])
		}
		if _, err := st.UpdateWorkloadType(ctx, typ.ID, u, operator); err != nil {
			t.Fatal(err)
		}
	}
	dept, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: set("research")}, operator)
	if err != nil {
		t.Fatal(err)
	}
	var projects []store.Project
	for i := range 8 {
		var pol store.PolicyUpdate
		lo, hi := 0, len(prios)-1
		if r.IntN(2) == 0 {
			lo, hi = r.IntN(len(prios)), r.IntN(len(prios))
			lo, hi = min(lo, hi), max(lo, hi)
			pol.MinPriority, pol.MaxPriority = set(prios[lo].Name), set(prios[hi].Name)
		}
		if r.IntN(2) == 0 {
			pol.DefaultPriorityID = set(prios[lo+r.IntN(hi-lo+1)].ID)
		}
		pol.AllowPriorityChange, pol.AllowPreemptibilityChange = set(r.IntN(2) == 0), set(r.IntN(2) == 0)
		p, err := st.CreateProject(ctx, store.ProjectUpdate{Name: set("p" + strconv.Itoa(i)), DepartmentID: set(dept.ID), Policy: pol}, operator)
		if err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p)
	}
	return projects
}
