package web

import (
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/uuid"
)

// View-model conversions: the same models feed the JSON API and the pages.

func (o organization) nodePoolView(p store.NodePool) views.NodePool {
	key, value := p.Label()
	v := views.NodePool{
		ID: p.ID.String(), Name: p.Name, LabelKey: key, LabelValue: value, Placement: p.Placement,
		Default: p.IsDefault(), Status: o.status.NodePoolStatus(p.Name),
		CreatedAt: p.CreatedAt.UTC(), CreatedBy: p.CreatedBy, UpdatedAt: p.UpdatedAt.UTC(), UpdatedBy: p.UpdatedBy,
		NetworkTopologyName: p.NetworkTopologyName,
	}
	if p.NetworkTopologyID != nil {
		id := p.NetworkTopologyID.String()
		v.NetworkTopologyID = &id
	}
	return v
}

func quotaView(q store.Quota) views.Quota {
	return views.Quota{
		NodePool: views.NodePoolRef{ID: q.NodePoolID.String(), Name: q.NodePoolName},
		GPU:      views.QuotaGPU{Deserved: q.Deserved, Limit: q.Limit, OverQuotaWeight: q.OverQuotaWeight},
	}
}

// orgStatus sums a project's or department's usage over the pools it has quota in.
func (o organization) orgStatus(kind, name string, quotas []store.Quota) views.OrgStatus {
	st := views.OrgStatus{NodePools: []views.PoolUsage{}}
	for _, q := range quotas {
		u := o.status.Usage(kind, name, q.NodePoolName)
		st.NodePools = append(st.NodePools, views.PoolUsage{NodePool: views.NodePoolRef{ID: q.NodePoolID.String(), Name: q.NodePoolName}, Usage: u})
		st.Allocated += u.Allocated
		st.AllocatedNonPreemptible += u.AllocatedNonPreemptible
		st.Borrowed += u.Borrowed
		st.Requested += u.Requested
		st.PendingWorkloads += u.PendingWorkloads
		st.RunningWorkloads += u.RunningWorkloads
	}
	return st
}

func (o organization) departmentView(d store.Department) views.Department {
	return views.Department{
		ID: d.ID.String(), Name: d.Name, Resources: mapSlice(d.Quotas, quotaView), ProjectCount: d.ProjectCount,
		PriorityPolicy: d.PriorityPolicy, PriorityOffset: d.PriorityOffset, PriorityWarning: d.PriorityWarning(),
		Status:    o.orgStatus("department", d.Name, d.Quotas),
		CreatedAt: d.CreatedAt.UTC(), CreatedBy: d.CreatedBy, UpdatedAt: d.UpdatedAt.UTC(), UpdatedBy: d.UpdatedBy,
		RunAIOrgUnit: runAIOrgUnit(d.Quotas, o.cluster),
	}
}

func (o organization) projectView(p store.Project) views.Project {
	v := views.Project{
		ID: p.ID.String(), Name: p.Name, DepartmentID: p.DepartmentID.String(), DepartmentName: p.DepartmentName,
		Namespaces: p.Namespaces, Resources: mapSlice(p.Quotas, quotaView),
		EffectiveNodePools: mapSlice(p.EffectiveNodePools, func(r store.NodePoolRef) views.NodePoolRef {
			return views.NodePoolRef{ID: r.ID.String(), Name: r.Name}
		}),
		Policy: views.Policy{
			DefaultPriorityID: idString(p.DefaultPriorityID), AllowPriorityChange: p.AllowPriorityChange,
			AllowPreemptibilityChange: p.AllowPreemptibilityChange,
			MinPriority:               p.MinPriority, MaxPriority: p.MaxPriority, PreemptionOrder: p.PreemptionOrder,
			PreemptionMode: p.PreemptionMode, MinRuntimeSeconds: p.MinRuntimeSeconds, Queueing: p.Queueing,
			PriorityPolicy: p.PriorityPolicy, PriorityOffset: p.PriorityOffset,
			ReclaimMinRuntimeSeconds: p.ReclaimMinRuntimeSeconds, PreemptionDelaySeconds: p.PreemptionDelaySeconds,
		},
		PriorityWarning: p.PriorityWarning(),
		Status:          o.orgStatus("project", p.Name, p.Quotas),
		CreatedAt:       p.CreatedAt.UTC(), CreatedBy: p.CreatedBy, UpdatedAt: p.UpdatedAt.UTC(), UpdatedBy: p.UpdatedBy,
		RunAIOrgUnit: runAIOrgUnit(p.Quotas, o.cluster), ParentID: p.DepartmentID.String(), EnforceRunaiScheduler: true,
		Effective: views.ProjectEffective{DefaultNodePools: mapSlice(p.EffectiveNodePools, func(r store.NodePoolRef) string { return r.Name })},
	}
	if len(p.NodePoolIDs) > 0 {
		v.NodePools = mapSlice(p.NodePoolIDs, uuid.UUID.String)
	}
	if v.Namespaces == nil {
		v.Namespaces = []string{}
	}
	return v
}
