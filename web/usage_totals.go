package web

import (
	"context"

	"github.com/arbiterhq/arbiter/store"
	"github.com/google/uuid"
)

// allProjectsUsage is what the Overview's charts stack for a caller who reads every project,
// from the history's totals rather than every project's rows: by department, the departments'
// totals; by project, the series of each pool's top projects and, as "others", the pool's
// total less theirs.
func (h *usagePages) allProjectsUsage(ctx context.Context, p usagePeriod, by string) ([]store.UsagePoint, []store.PoolCapacityPoint, map[string]column, error) {
	q := store.UsageTotalsQuery{From: p.From, To: p.To, Step: p.Step}
	if by == "department" {
		departments, pools, err := h.history.DepartmentUsageSeries(ctx, q)
		if err != nil {
			return nil, nil, nil, err
		}
		return departmentPoints(departments), poolCapacity(pools), nil, nil
	}
	// one more than the chart names: a pool with more has "others"
	top, err := h.history.TopProjectsByAllocation(ctx, q, topProjects+1)
	if err != nil {
		return nil, nil, nil, err
	}
	perPool, overflows := map[string]int{}, map[string]bool{}
	named := top[:0]
	for _, t := range top { // by pool, most first
		if perPool[t.NodePool]++; perPool[t.NodePool] > topProjects {
			overflows[t.NodePool] = true
		} else {
			named = append(named, t)
		}
	}
	top = named
	pools, err := h.history.PoolUsageSeries(ctx, q)
	if err != nil {
		return nil, nil, nil, err
	}
	var points []store.UsagePoint
	if len(top) > 0 {
		inTop := map[string]map[uuid.UUID]bool{}
		var ids []uuid.UUID
		for _, t := range top {
			if inTop[t.NodePool] == nil {
				inTop[t.NodePool] = map[uuid.UUID]bool{}
			}
			inTop[t.NodePool][t.ProjectID] = true
			ids = append(ids, t.ProjectID)
		}
		all, _, err := h.history.UsageSeries(ctx, store.UsageQuery{From: p.From, To: p.To, Step: p.Step, ProjectIDs: ids})
		if err != nil {
			return nil, nil, nil, err
		}
		for _, u := range all { // a project in one pool's top may be in another pool's others
			if inTop[u.NodePool][u.ProjectID] {
				points = append(points, u)
			}
		}
	}
	others := map[string]column{}
	for _, pool := range pools {
		if !overflows[pool.NodePool] {
			continue
		}
		if others[pool.NodePool] == nil {
			others[pool.NodePool] = p.column()
		}
		others[pool.NodePool].add(p.index(pool.At), pool.NonPreemptible+pool.Preemptible+pool.Borrowed)
	}
	for _, u := range points {
		if others[u.NodePool] == nil {
			continue
		}
		others[u.NodePool].add(p.index(u.At), -(u.NonPreemptible + u.Preemptible + u.Borrowed))
	}
	for _, col := range others {
		for _, v := range col {
			if v != nil && *v < 0 { // the sums' rounding: the top held all
				*v = 0
			}
		}
	}
	return points, poolCapacity(pools), others, nil
}

// departmentPoints are the departments' totals as points of the project-less kind the charts
// stack and sum.
func departmentPoints(departments []store.DepartmentUsagePoint) []store.UsagePoint {
	out := make([]store.UsagePoint, len(departments))
	for i, d := range departments {
		out[i] = store.UsagePoint{At: d.At, NodePool: d.NodePool, DepartmentID: d.DepartmentID,
			NonPreemptible: d.NonPreemptible, Preemptible: d.Preemptible, Borrowed: d.Borrowed,
			Pending: d.Pending, Deserved: d.Deserved, FairShare: d.FairShare,
			Preemptions: d.Preemptions, Reclaims: d.Reclaims, RecordedSeconds: d.RecordedSeconds}
	}
	return out
}

func poolCapacity(pools []store.PoolUsagePoint) []store.PoolCapacityPoint {
	out := make([]store.PoolCapacityPoint, len(pools))
	for i, p := range pools {
		out[i] = store.PoolCapacityPoint{At: p.At, NodePool: p.NodePool, GPUs: p.CapacityGPUs, RecordedSeconds: p.RecordedSeconds}
	}
	return out
}
