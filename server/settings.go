package server

import (
	"context"

	"github.com/arbiterhq/arbiter/internal/listquery"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/store"
)

// loadSettings reads the configuration part of a scheduling snapshot from the store: the
// dictionary, categories, workload types and the organization.
func loadSettings(ctx context.Context, st *store.Store) (*kube.Settings, error) {
	var s kube.Settings
	prios, err := st.Priorities(ctx, listquery.Query{SortBy: "value"})
	if err != nil {
		return nil, err
	}
	cats, err := st.Categories(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return nil, err
	}
	types, err := st.WorkloadTypes(ctx, listquery.Query{SortBy: "name"}, false)
	if err != nil {
		return nil, err
	}
	s.Priorities, s.Categories, s.WorkloadTypes = store.SchedulingPriorities(prios), store.SchedulingCategories(cats), store.SchedulingTypes(types)
	org, err := st.OrganizationSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	fairness, err := st.NodePoolFairnesses(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range org.NodePools {
		pool := scheduler.NodePool{Name: p.Name, LabelKey: p.LabelKey, LabelValue: p.LabelValue, Placement: scheduler.Placement(p.Placement),
			TimeBasedFairness: fairness[p.ID].Scheduling()}
		if p.NetworkTopologyName != nil {
			pool.Topology = *p.NetworkTopologyName
		}
		s.NodePools = append(s.NodePools, pool)
	}
	// Arbiter's own topologies (at most store.MaxNetworkTopologies); the cluster's are merged
	// in by the scheduler's cache.
	topologies, err := st.NetworkTopologies(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return nil, err
	}
	for _, t := range topologies {
		s.Topologies = append(s.Topologies, scheduler.Topology{Name: t.Name, Levels: t.Levels})
	}
	for _, d := range org.Departments {
		s.Departments = append(s.Departments, scheduler.Department{Name: d.Name, Quotas: quotas(d.Quotas),
			PriorityPolicy: scheduler.PriorityPolicy(d.PriorityPolicy), PriorityOffset: int32(d.PriorityOffset)})
	}
	s.NamespaceProject = map[string]string{}
	for _, p := range org.Projects {
		sp := scheduler.Project{
			Name: p.Name, ID: p.ID.String(), Department: p.DepartmentName, Quotas: quotas(p.Quotas),
			PriorityPolicy: scheduler.PriorityPolicy(p.PriorityPolicy), PriorityOffset: int32(p.PriorityOffset),
			Policy: p.Policy.Scheduling(),
		}
		for _, np := range p.EffectiveNodePools {
			sp.NodePools = append(sp.NodePools, np.Name)
		}
		for _, ns := range p.Namespaces {
			s.NamespaceProject[ns] = p.Name
		}
		s.Projects = append(s.Projects, sp)
	}
	return &s, nil
}

func quotas(qs []store.Quota) map[string]scheduler.Quota {
	m := make(map[string]scheduler.Quota, len(qs))
	for _, q := range qs {
		m[q.NodePoolName] = scheduler.Quota{Deserved: int64(q.Deserved), Limit: int64(q.Limit), OverQuotaWeight: int64(q.OverQuotaWeight)}
	}
	return m
}
