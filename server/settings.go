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
	for _, p := range prios {
		s.Priorities = append(s.Priorities, scheduler.Priority{Name: p.Name, Value: int32(p.Value)})
	}
	cats, err := st.Categories(ctx, listquery.Query{SortBy: "name"})
	if err != nil {
		return nil, err
	}
	for _, c := range cats {
		s.Categories = append(s.Categories, scheduler.Category{Name: c.Name, DefaultPriority: c.DefaultPriorityName, DefaultPreemptibility: scheduler.Preemptibility(c.DefaultPreemptibility)})
	}
	types, err := st.WorkloadTypes(ctx, listquery.Query{SortBy: "name"}, false)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		s.WorkloadTypes = append(s.WorkloadTypes, scheduler.WorkloadType{
			Name: t.Name, Group: t.Group, Category: store.Deref(t.CategoryName), Priority: store.Deref(t.PriorityName),
			Preemptibility: scheduler.Preemptibility(store.Deref(t.Preemptibility)),
		})
	}
	org, err := st.OrganizationSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range org.NodePools {
		s.NodePools = append(s.NodePools, scheduler.NodePool{Name: p.Name, LabelKey: p.LabelKey, LabelValue: p.LabelValue, Placement: scheduler.Placement(p.Placement)})
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
			Policy: scheduler.Policy{
				DefaultPriority:            store.Deref(p.DefaultPriorityName),
				ForbidPriorityChange:       !p.AllowPriorityChange,
				ForbidPreemptibilityChange: !p.AllowPreemptibilityChange,
				MinPriority:                store.Deref(p.MinPriority),
				MaxPriority:                store.Deref(p.MaxPriority),
				PreemptionOrder:            scheduler.PreemptionOrder(p.PreemptionOrder),
				PreemptionMode:             scheduler.PreemptionMode(p.PreemptionMode),
				MinRuntimeSeconds:          int64(p.MinRuntimeSeconds),
				Queueing:                   scheduler.Queueing(p.Queueing),
				ReclaimMinRuntimeSeconds:   int64(p.ReclaimMinRuntimeSeconds),
				PreemptionDelaySeconds:     int64(p.PreemptionDelaySeconds),
			},
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
