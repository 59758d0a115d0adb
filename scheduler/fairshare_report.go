package scheduler

import (
	"cmp"
	"slices"
)

// Fair share at a moment: how many GPUs of a node pool S11 would give each project and
// department if the pool were divided afresh among what they hold and ask for now. The cycle's
// report carries it (QueueStatus.FairShare) and the usage history records it, so that a
// project can see over time whether it received its share.
//
// S11 serves deserved quota first, the most starved first, then shares the surplus by
// over-quota weight, the furthest below its weighted share first; a unit of weight 0 gets
// surplus only when no unit with a weight wants it. Carried to its end, that order divides a
// pool by water-filling: the deserved phase fills each unit in proportion to its deserved quota
// up to what it deserves, the surplus phase in proportion to its weight, the last phase equally
// among units of weight 0; no unit is filled beyond its demand (GPUs allocated plus GPUs its
// pending work requests) or its limit. Departments divide the pool, then each department's
// share is divided among its projects the same way; projects without a department share a
// stand-in department, as in the cycle. S25's queue priority, which orders the surplus among
// siblings, is left out: fair share says what fairness alone gives.

// FairShareClaim is one sibling's standing in a node pool when the pool is divided.
type FairShareClaim struct {
	Quota  Quota
	Demand float64 // GPUs allocated plus GPUs requested by pending work
}

// FairShares divides capacity GPUs among siblings by S11's water-filling; the i-th share is the
// i-th claim's. Shares never exceed a claim's demand or its limit, and add up to at most the
// capacity (less when demand is less).
func FairShares(capacity float64, claims []FairShareClaim) []float64 {
	n := len(claims)
	shares := make([]float64, n)
	if n == 0 || capacity <= 0 {
		return shares
	}
	ceiling := make([]float64, n) // what each may reach at most: its demand within its limit
	for i, c := range claims {
		ceiling[i] = max(c.Demand, 0)
		if c.Quota.Limit >= 0 {
			ceiling[i] = min(ceiling[i], float64(c.Quota.Limit))
		}
	}
	room, weight := make([]float64, n), make([]float64, n)
	phase := func(pick func(i int) (room, weight float64)) {
		for i := range claims {
			room[i], weight[i] = pick(i)
		}
		given := waterFill(capacity, room, weight)
		for i := range shares {
			shares[i] += given[i]
			capacity -= given[i]
		}
	}
	phase(func(i int) (float64, float64) { // deserved quota, in proportion to it
		d := float64(claims[i].Quota.Deserved)
		return min(d, ceiling[i]), d
	})
	phase(func(i int) (float64, float64) { // the surplus, by over-quota weight
		return ceiling[i] - shares[i], float64(claims[i].Quota.OverQuotaWeight)
	})
	phase(func(i int) (float64, float64) { // what no weighted unit wants, equally to weight 0
		if claims[i].Quota.OverQuotaWeight > 0 {
			return 0, 0
		}
		return ceiling[i] - shares[i], 1
	})
	return shares
}

// waterFill divides amount among units in proportion to their weights, none beyond its room;
// what a full unit cannot take goes to the others. Units of weight 0 get nothing.
func waterFill(amount float64, room, weight []float64) []float64 {
	given := make([]float64, len(room))
	var order []int
	total := 0.0
	for i := range room {
		if weight[i] > 0 && room[i] > 0 {
			order = append(order, i)
			total += weight[i]
		}
	}
	// the units that fill first are those with the least room per weight
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(room[a]/weight[a], room[b]/weight[b]) })
	for k, i := range order {
		if amount <= 0 {
			break
		}
		level := amount / total
		if room[i]/weight[i] > level {
			// no one left fills up: each gets the same share per weight
			for _, j := range order[k:] {
				given[j] = level * weight[j]
			}
			return given
		}
		given[i] = room[i]
		amount -= room[i]
		total -= weight[i]
	}
	return given
}

// fillFairShares sets FairShare on the report's projects and departments (plan.Projects and
// plan.Departments, with the node pools' capacity in plan.NodePools already reported).
func (c *cycle) fillFairShares() {
	nPools := len(c.pools)
	if nPools == 0 {
		return
	}
	poolIndex := make(map[string]int, nPools)
	for i := range c.pools {
		poolIndex[c.pools[i].pool.Name] = i
	}
	// demand per project and pool: what it holds plus what it asks for there
	demand := make([]float64, len(c.projects)*nPools)
	projectRow := make([]int, len(c.projects)*nPools) // index in plan.Projects, or -1
	for i := range projectRow {
		projectRow[i] = -1
	}
	for r := range c.plan.Projects {
		s := &c.plan.Projects[r]
		j, ok := c.projectIndex[s.Name]
		if !ok {
			continue
		}
		pool, ok := poolIndex[s.NodePool]
		if !ok {
			continue
		}
		demand[int(j)*nPools+pool] = float64(s.Allocated + s.Requested)
		projectRow[int(j)*nPools+pool] = r
	}
	deptRow := make(map[[2]int]int, len(c.plan.Departments)) // (department, pool) -> index
	deptByName := make(map[string]int, len(c.depts))
	for d := range c.depts {
		if !c.depts[d].unbounded {
			deptByName[c.depts[d].name] = d
		}
	}
	for r := range c.plan.Departments {
		s := &c.plan.Departments[r]
		d, ok := deptByName[s.Name]
		pool, known := poolIndex[s.NodePool]
		if ok && known {
			deptRow[[2]int{d, pool}] = r
		}
	}
	members := make([][]int, len(c.depts))
	for j := range c.projects {
		members[c.projects[j].dept] = append(members[c.projects[j].dept], j)
	}
	deptClaims := make([]FairShareClaim, len(c.depts))
	var projectClaims []FairShareClaim
	for pool := range nPools {
		for d := range c.depts {
			q := c.depts[d].shares[pool].quota
			deptClaims[d] = FairShareClaim{Quota: q}
			for _, j := range members[d] {
				deptClaims[d].Demand += demand[j*nPools+pool]
			}
		}
		deptShares := FairShares(float64(c.plan.NodePools[pool].ReadyGPUs), deptClaims)
		for d := range c.depts {
			if r, ok := deptRow[[2]int{d, pool}]; ok {
				c.plan.Departments[r].FairShare = deptShares[d]
			}
			projectClaims = projectClaims[:0]
			for _, j := range members[d] {
				projectClaims = append(projectClaims, FairShareClaim{Quota: c.projects[j].shares[pool].quota, Demand: demand[j*nPools+pool]})
			}
			for k, share := range FairShares(deptShares[d], projectClaims) {
				if r := projectRow[members[d][k]*nPools+pool]; r >= 0 {
					c.plan.Projects[r].FairShare = share
				}
			}
		}
	}
}
