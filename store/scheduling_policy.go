package store

import (
	"github.com/arbiterhq/arbiter/scheduler"

	"k8s.io/utils/ptr"
)

// The configuration as the core (package scheduler) reads it. The scheduler's snapshot and
// the API's policy checks and defaults are built from the same conversions, so that both ask
// one Catalog the same questions (S7, S8).

// Scheduling is the policy as the core reads it.
func (p Policy) Scheduling() scheduler.Policy {
	return scheduler.Policy{
		DefaultPriority:            ptr.Deref(p.DefaultPriorityName, ""),
		ForbidPriorityChange:       !p.AllowPriorityChange,
		ForbidPreemptibilityChange: !p.AllowPreemptibilityChange,
		MinPriority:                ptr.Deref(p.MinPriority, ""),
		MaxPriority:                ptr.Deref(p.MaxPriority, ""),
		PreemptionOrder:            scheduler.PreemptionOrder(p.PreemptionOrder),
		PreemptionMode:             scheduler.PreemptionMode(p.PreemptionMode),
		MinRuntimeSeconds:          int64(p.MinRuntimeSeconds),
		Queueing:                   scheduler.Queueing(p.Queueing),
		ReclaimMinRuntimeSeconds:   int64(p.ReclaimMinRuntimeSeconds),
		PreemptionDelaySeconds:     int64(p.PreemptionDelaySeconds),
	}
}

// ProjectPolicy is the project's policy with its name, for the core's policy checks; nil for
// no project (a workload without one, or whose project was deleted), which no policy bounds.
func ProjectPolicy(p *Project) *scheduler.ProjectPolicy {
	if p == nil {
		return nil
	}
	return &scheduler.ProjectPolicy{Name: p.Name, Policy: p.Policy.Scheduling()}
}

// SchedulingPriorities, SchedulingCategories and SchedulingTypes are the dictionary, the
// categories and the workload types as the core reads them.
func SchedulingPriorities(prios []Priority) []scheduler.Priority {
	var out []scheduler.Priority
	for _, p := range prios {
		out = append(out, scheduler.Priority{Name: p.Name, Value: int32(p.Value)})
	}
	return out
}

func SchedulingCategories(cats []Category) []scheduler.Category {
	var out []scheduler.Category
	for _, c := range cats {
		out = append(out, scheduler.Category{Name: c.Name, DefaultPriority: c.DefaultPriorityName,
			DefaultPreemptibility: scheduler.Preemptibility(c.DefaultPreemptibility)})
	}
	return out
}

func SchedulingTypes(types []WorkloadType) []scheduler.WorkloadType {
	var out []scheduler.WorkloadType
	for _, t := range types {
		out = append(out, scheduler.WorkloadType{Name: t.Name, Group: t.Group, Category: ptr.Deref(t.CategoryName, ""),
			Priority: ptr.Deref(t.PriorityName, ""), Preemptibility: scheduler.Preemptibility(ptr.Deref(t.Preemptibility, ""))})
	}
	return out
}

// SchedulingCatalog is the core's Catalog of the dictionary, categories and types.
func SchedulingCatalog(prios []Priority, cats []Category, types []WorkloadType) *scheduler.Catalog {
	return scheduler.NewCatalog(SchedulingPriorities(prios), SchedulingCategories(cats), SchedulingTypes(types))
}
