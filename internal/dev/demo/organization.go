// Package demo is `arbiter serve --demo` (which `make run` turns on; docs/demo.md): an
// organization seeded through the store (organization.go), and a trickle of Jobs and a few
// Deployments in the cluster that keeps it a little oversubscribed (workloads.go), so the
// console shows running and pending work, borrowing, preemption and reclaim within a minute
// or two.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// actor is who the audit log says made the demo organization.
var actor = store.Actor{Subject: "demo", SubjectType: "system"}

// Label marks the cluster objects the demo made.
const Label = "arbiter.dev/demo"

type demoQuota struct {
	pool     string
	deserved int
	limit    int // -1: no limit
	weight   int
}

type demoPool struct{ name, placement string }

// TopologyName is the demo's network topology (S29): the local cluster's blocks and racks
// (devcluster.TopologyLevels), the topology of both its node pools.
const TopologyName = "racks"

// Topologies are the demo's network topologies as a snapshot holds them once seeded.
func Topologies() []scheduler.Topology {
	return []scheduler.Topology{{Name: TopologyName, Levels: devcluster.TopologyLevels}}
}

type demoDepartment struct {
	name   string
	quotas []demoQuota
}

type demoProject struct {
	name, department string
	quotas           []demoQuota
	policy           store.PolicyUpdate
}

// The local control plane's default nodes are a100=4x8 and h100=2x8 (devcluster.DefaultNodes):
// 32 and 16 GPUs. Departments deserve 26 and 12 of them, so a fifth of each pool is there to be
// borrowed, and the workloads below ask for more than the cluster has.
var (
	demoPools = []demoPool{{"a100", "binpack"}, {"h100", "spread"}}

	demoDepartments = []demoDepartment{
		{"research", []demoQuota{{"a100", 16, -1, 2}, {"h100", 8, -1, 2}}},
		{"product", []demoQuota{{"a100", 10, -1, 2}, {"h100", 4, -1, 2}}},
	}

	demoProjects = []demoProject{
		// Suspends instead of terminating what it loses (S20).
		{"vision", "research", []demoQuota{{"a100", 6, -1, 2}, {"h100", 4, -1, 2}},
			withMinRuntime(store.PolicyUpdate{PreemptionMode: set("suspend")})},
		// Strict queueing: nothing passes a blocked head (S12); a bigger share of the surplus.
		{"nlp", "research", []demoQuota{{"a100", 8, -1, 3}, {"h100", 4, -1, 3}},
			withMinRuntime(store.PolicyUpdate{Queueing: set("strict")})},
		// Small quota, lots of small low-priority work: mostly borrowed GPUs.
		{"speech", "research", []demoQuota{{"a100", 2, -1, 1}, {"h100", 0, -1, 1}}, withMinRuntime(store.PolicyUpdate{})},
		// Priorities and preemptibility are fixed by the workload types: such labels are
		// ignored with a warning.
		{"search", "product", []demoQuota{{"a100", 4, -1, 2}, {"h100", 2, -1, 2}},
			withMinRuntime(store.PolicyUpdate{AllowPriorityChange: set(false), AllowPreemptibilityChange: set(false)})},
		// A limit, and newest-first preemption.
		{"ads", "product", []demoQuota{{"a100", 6, 14, 2}, {"h100", 2, -1, 2}},
			withMinRuntime(store.PolicyUpdate{PreemptionOrder: set("newest")})},
	}
)

// withMinRuntime adds the minute of runtime every demo project gives its work before it is
// preempted or, where it borrows, reclaimed (S27). Without it the demo's steady stream of
// higher-priority work took the same low-priority Jobs again seconds after they had resumed
// or restarted (2-3 times a quarter of an hour in the simulation, a vision Job seven times in
// seven minutes in a demo watched), which is how a cluster looks when it thrashes; the price
// is that an urgent Job may wait up to a minute for its victims (docs/demo.md).
func withMinRuntime(p store.PolicyUpdate) store.PolicyUpdate {
	p.MinRuntimeSeconds, p.ReclaimMinRuntimeSeconds = set(60), set(60)
	return p
}

func set[T any](v T) store.Optional[T] { return store.Optional[T]{Set: true, Value: &v} }

func (qs demoQuotaList) inputs() []store.QuotaInput {
	out := make([]store.QuotaInput, 0, len(qs))
	for _, q := range qs {
		limit, weight := q.limit, q.weight
		out = append(out, store.QuotaInput{NodePoolName: q.pool, Deserved: q.deserved, Limit: &limit, OverQuotaWeight: &weight})
	}
	return out
}

type demoQuotaList []demoQuota

// Seed seeds the demo organization, logging what it did; a refusal (say a project someone
// edited) is a warning, not a reason to stop.
func Seed(ctx context.Context, st *store.Store, log *slog.Logger) {
	created, err := SeedOrganization(ctx, st)
	if err != nil {
		log.Warn("demo organization only partly seeded", "created", created, "err", err)
		return
	}
	if created > 0 {
		log.Info("demo organization seeded", "created", created)
	}
}

// SeedOrganization creates the demo node pools, departments and projects that do not exist yet (by
// name); what exists, perhaps edited since, is left as it is. Refusals are reported together.
func SeedOrganization(ctx context.Context, st *store.Store) (created int, err error) {
	org, err := st.OrganizationSnapshot(ctx)
	if err != nil {
		return 0, fmt.Errorf("demo organization: %w", err)
	}
	var errs []error
	topology, created, err := seedTopology(ctx, st)
	if err != nil {
		errs = append(errs, err)
	}
	pools := map[string]bool{}
	for _, p := range org.NodePools {
		pools[p.Name] = true
	}
	for _, p := range demoPools {
		if pools[p.name] {
			continue
		}
		_, err := st.CreateNodePool(ctx, store.NodePoolUpdate{Name: set(p.name), LabelKey: set(devcluster.LabelNodePool),
			LabelValue: set(p.name), Placement: set(p.placement), NetworkTopology: topology}, actor)
		if err != nil {
			errs = append(errs, fmt.Errorf("node pool %s: %w", p.name, err))
			continue
		}
		created++
	}
	departments := map[string]store.Department{}
	for _, d := range org.Departments {
		departments[d.Name] = d
	}
	for _, d := range demoDepartments {
		if _, ok := departments[d.name]; ok {
			continue
		}
		dep, err := st.CreateDepartment(ctx, store.DepartmentUpdate{Name: set(d.name), Resources: set(demoQuotaList(d.quotas).inputs())}, actor)
		if err != nil {
			errs = append(errs, fmt.Errorf("department %s: %w", d.name, err))
			continue
		}
		departments[d.name] = dep
		created++
	}
	projects := map[string]bool{}
	for _, p := range org.Projects {
		projects[p.Name] = true
	}
	for _, p := range demoProjects {
		dep, ok := departments[p.department]
		if projects[p.name] || !ok {
			continue
		}
		_, err := st.CreateProject(ctx, store.ProjectUpdate{
			Name: set(p.name), DepartmentID: set(dep.ID), Namespaces: set([]string{p.name}),
			Resources: set(demoQuotaList(p.quotas).inputs()), Policy: p.policy,
		}, actor)
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", p.name, err))
			continue
		}
		created++
	}
	if len(errs) > 0 {
		return created, fmt.Errorf("demo organization: %w", errors.Join(errs...))
	}
	return created, nil
}

// seedTopology creates the demo's network topology unless one of its name exists, and says
// how pools are to refer to it (not at all when it could not be made).
func seedTopology(ctx context.Context, st *store.Store) (store.Optional[uuid.UUID], int, error) {
	existing, err := st.NetworkTopologies(ctx, listquery.Query{Search: TopologyName})
	if err != nil {
		return store.Optional[uuid.UUID]{}, 0, fmt.Errorf("network topology %s: %w", TopologyName, err)
	}
	for _, t := range existing {
		if t.Name == TopologyName {
			return set(t.ID), 0, nil
		}
	}
	t, err := st.CreateNetworkTopology(ctx, TopologyName, devcluster.TopologyLevels, actor)
	if err != nil {
		return store.Optional[uuid.UUID]{}, 0, fmt.Errorf("network topology %s: %w", TopologyName, err)
	}
	return set(t.ID), 1, nil
}

// Organization is the demo organization as a scheduling snapshot holds it once seeded: its
// node pools, departments and projects (each project owns the namespace of its name), for a
// simulation that replays the demo without a database (scheduler/kube's thrash simulation).
// The seeded organization and this one come from the same tables above.
func Organization() (pools []scheduler.NodePool, departments []scheduler.Department, projects []scheduler.Project) {
	for _, p := range demoPools {
		pools = append(pools, scheduler.NodePool{Name: p.name, LabelKey: devcluster.LabelNodePool, LabelValue: p.name,
			Placement: scheduler.Placement(p.placement), Topology: TopologyName})
	}
	quotas := func(qs []demoQuota) map[string]scheduler.Quota {
		out := map[string]scheduler.Quota{}
		for _, q := range qs {
			limit := int64(q.limit)
			if q.limit < 0 {
				limit = scheduler.NoLimit
			}
			out[q.pool] = scheduler.Quota{Deserved: int64(q.deserved), Limit: limit, OverQuotaWeight: int64(q.weight)}
		}
		return out
	}
	for _, d := range demoDepartments {
		departments = append(departments, scheduler.Department{Name: d.name, Quotas: quotas(d.quotas), PriorityPolicy: scheduler.Fence})
	}
	for _, p := range demoProjects {
		pol := p.policy
		projects = append(projects, scheduler.Project{Name: p.name, Department: p.department, Quotas: quotas(p.quotas),
			Policy: scheduler.Policy{
				ForbidPriorityChange:       pol.AllowPriorityChange.Set && !*pol.AllowPriorityChange.Value,
				ForbidPreemptibilityChange: pol.AllowPreemptibilityChange.Set && !*pol.AllowPreemptibilityChange.Value,
				PreemptionOrder:            scheduler.PreemptionOrder(valueOr(pol.PreemptionOrder, string(scheduler.OldestFirst))),
				PreemptionMode:             scheduler.PreemptionMode(valueOr(pol.PreemptionMode, string(scheduler.Terminate))),
				MinRuntimeSeconds:          int64(valueOr(pol.MinRuntimeSeconds, 0)),
				ReclaimMinRuntimeSeconds:   int64(valueOr(pol.ReclaimMinRuntimeSeconds, 0)),
				Queueing:                   scheduler.Queueing(valueOr(pol.Queueing, string(scheduler.BestEffort))),
			}, PriorityPolicy: scheduler.Fence})
	}
	// by name, as a snapshot lists them
	slices.SortFunc(departments, func(a, b scheduler.Department) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(projects, func(a, b scheduler.Project) int { return strings.Compare(a.Name, b.Name) })
	return pools, departments, projects
}

func valueOr[T any](o store.Optional[T], zero T) T {
	if o.Set && o.Value != nil {
		return *o.Value
	}
	return zero
}
