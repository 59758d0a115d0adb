package scheduler

import "slices"

// reclaimAfterPreemption is S30, tried when reclaim (S17) and preemption (S16) each failed
// alone: a unit whose project would be inside its deserved quota in a pool once the project's
// lower-priority work there were gone evicts that work (S16's victims, in S16's order) until
// the project is inside, then borrowed work of other projects (S17's victims, in S17's order)
// until the unit fits; pruning gives back no victim of its own project that would take the
// project beyond its deserved quota again, as reclaiming to borrow is not reclaim. Kueue does
// the same with withinClusterQueue and reclaimWithinCohort set: a ClusterQueue below its
// nominal quota once its lower-priority workloads are preempted reclaims from its cohort. It
// commits and reports true when the unit is placed.
func (c *cycle) reclaimAfterPreemption(wi int32, unit []int32) bool {
	ws := &c.wls[wi]
	gpus := c.unitGPUs(unit)
	if gpus == 0 {
		return false // only GPUs are guaranteed
	}
	proj := &c.projects[ws.project]
	for pi, pool := range proj.pools {
		sh := &proj.shares[pool]
		if gpus > sh.quota.Deserved || c.inDeserved(wi, pool, gpus) || (!ws.preemptible && sh.nonPreemptibleExceeded(gpus)) {
			continue // never inside its deserved quota, or already inside it (S17 alone was tried)
		}
		own, freed := c.preemptionCandidates(wi, int32(pi), pool, c.candBuf[:0], 0)
		c.candBuf = own
		// With all of its own victims gone the project and its department would hold freed
		// GPUs less: as if the unit asked for that much less.
		if !c.inDeserved(wi, pool, gpus-freed) {
			continue // all of it gone would still not bring the project inside
		}
		// what could be free at most: the free GPUs, the project's own victims, and all that
		// the projects reclaim may take from run
		if !c.reclaimCouldFit(ws.project, pool, c.deptInDeserved(wi, pool, gpus-freed), gpus-freed) {
			continue
		}
		slices.SortFunc(own, c.preemptionOrder(proj))
		inside := func() bool { return c.inDeserved(wi, pool, gpus) }
		nextOwn := inOrder(own)
		next := func() candidate {
			if !inside() {
				return nextOwn()
			}
			return candidate{wl: c.nextReclaimVictim(wi, pool, c.deptInDeserved(wi, pool, gpus)), pool: pool, rule: RuleReclaim}
		}
		if c.evictUntilFits(wi, unit, next, inside) {
			return true
		}
	}
	return false
}
