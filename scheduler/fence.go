package scheduler

import "cmp"

// Priority fencing and offsets (S25, from YuniKorn's priority design). A unit's queue
// priority is its offset when it is fenced; when it is open, the highest priority among its
// pending work plus its offset. Queue priority orders siblings only where they compete for
// GPUs nobody is guaranteed (S11's second phase): deserved quota comes first whatever the
// priorities, so an open unit never takes guaranteed GPUs from a fenced one.

// projectQueuePriority is a project's queue priority: the head of its queue is its highest
// priority waiting workload (S10), so that is the "highest pending priority" of the rule.
func (c *cycle) projectQueuePriority(j int32) int64 {
	p := &c.projects[j]
	if !p.open || p.next >= len(p.queue) {
		return p.offset
	}
	return int64(c.wls[p.queue[p.next]].prio) + p.offset
}

// arenaQueuePriority is a department's queue priority in an arena: for an open department,
// the highest of its waiting projects' queue priorities plus its offset. Only open
// departments look at their projects, so a cluster where everything is fenced pays nothing.
func (c *cycle) arenaQueuePriority(a int32) int64 {
	ar := &c.arenas[a]
	dept := &c.depts[ar.dept]
	if !dept.open {
		return dept.offset
	}
	best, any := int64(0), false
	for _, j := range ar.projects.items {
		if q := c.projectQueuePriority(j); !any || q > best {
			best, any = q, true
		}
	}
	return best + dept.offset
}

// compareGroups is S11 with S25: a unit below its deserved quota goes first, the most starved
// first, whatever the priorities; among units past it, the higher queue priority first, then
// the weighted over-quota order. 0 when they tie.
func compareGroups(ka, kb fairKey, a, b *group, queuePriority func(int32) int64, ia, ib int32) int {
	if ka.class != 0 && kb.class != 0 && (a.open || a.offset != 0 || b.open || b.offset != 0) {
		if d := cmp.Compare(queuePriority(ib), queuePriority(ia)); d != 0 {
			return d
		}
	}
	return ka.compare(kb)
}
