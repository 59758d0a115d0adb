package scheduler

import (
	"cmp"
	"slices"
)

// nominate is phase 2: put pending workloads in their projects' queues and set aside those
// that cannot be tried this cycle.
func (c *cycle) nominate() {
	c.markWaitingForEvictions()
	c.carveQueues()
	for wi := range c.wls {
		ws := &c.wls[wi]
		if ws.pendingPods == 0 {
			continue
		}
		if ws.project < 0 {
			ws.outcome, *c.failOf(ws) = skipped, failure{reason: NoProject, pool: -1}
			continue
		}
		p := &c.projects[ws.project]
		p.queue = append(p.queue, int32(wi))
		have := ws.pendingPods
		for k := ws.firstPod; !ws.suspended && k < ws.firstPod+ws.pods; k++ {
			if ps := &c.pods[k]; ps.bound && !ps.terminating {
				have++
			}
		}
		if gang := c.pend[ws.pend].gang; int(have) < gang {
			ws.outcome = skipped
			*c.failOf(ws) = failure{reason: GangIncomplete, pool: -1, amount: int64(gang), bound: int64(have)}
		}
	}
}

// carveQueues gives each project an empty queue with room for its pending workloads, all
// carved out of one array.
func (c *cycle) carveQueues() {
	counts := make([]int32, len(c.projects))
	total := 0
	for wi := range c.wls {
		if ws := &c.wls[wi]; ws.pendingPods > 0 && ws.project >= 0 {
			counts[ws.project]++
			total++
		}
	}
	slab := reuse(c.scratch.queues, total)[:total]
	c.scratch.queues = slab
	for j, n := range counts {
		c.projects[j].queue = slab[:0:n]
		slab = slab[n:]
	}
}

// findWorkloads sets each UID of want (a few: preemptors, reservations) to the index of its
// workload, -1 when there is none, in one pass over the workloads. A workload's replicas beyond
// its minimum are a part of it, not a workload (S26), and are not found. Cycles with evictions
// in flight used to make a map of every workload's UID for the few they looked up.
func (c *cycle) findWorkloads(want map[string]int32) {
	if len(want) == 0 {
		return
	}
	for uid := range want {
		want[uid] = -1
	}
	for wi := range c.wls {
		ws := &c.wls[wi]
		if _, ok := want[ws.w.UID]; ok && !c.isExtra(ws) {
			want[ws.w.UID] = int32(wi)
		}
	}
}

// markWaitingForEvictions finds preemptors whose victims still hold their nodes (S19).
func (c *cycle) markWaitingForEvictions() {
	var victims []int32
	var preemptors map[string]int32 // made with the first victim: most cycles have none
	for vi := range c.wls {
		if v := &c.wls[vi]; v.terminating && v.w.PreemptedBy != "" {
			if preemptors == nil {
				preemptors = map[string]int32{}
			}
			victims = append(victims, int32(vi))
			preemptors[v.w.PreemptedBy] = -1
		}
	}
	c.findWorkloads(preemptors)
	for _, vi := range victims {
		v := &c.wls[vi]
		wi := preemptors[v.w.PreemptedBy]
		if wi < 0 {
			continue
		}
		ws := &c.wls[wi]
		ws.waitEvictions = true
		if ws.pend < 0 {
			continue // nothing of it waits, so nothing is shown
		}
		nominated := &c.pend[ws.pend].nominatedNodes
		for k := v.firstPod; k < v.firstPod+v.pods; k++ {
			if ps := &c.pods[k]; ps.terminating && !slices.Contains(*nominated, ps.node) {
				*nominated = append(*nominated, ps.node)
			}
		}
	}
}

// compareQueue is S10: higher priority first, then earlier queue time, then name.
func (c *cycle) compareQueue(a, b int32) int {
	wa, wb := &c.wls[a], &c.wls[b]
	if wa.prio != wb.prio {
		return cmp.Compare(wb.prio, wa.prio)
	}
	if qa, qb := c.pend[wa.pend].queued, c.pend[wb.pend].queued; qa != qb {
		return cmp.Compare(qa, qb)
	}
	if d := cmp.Compare(wa.w.Name, wb.w.Name); d != 0 {
		return d
	}
	if d := cmp.Compare(wa.w.UID, wb.w.UID); d != 0 {
		return d
	}
	return cmp.Compare(a, b) // parts of one semi-preemptible workload: its minimum first (S26)
}

// order is phase 3. Each queue is sorted on a copy of the keys compareQueue looks at first, so
// that comparing reads neighbouring memory rather than two workloads' states scattered over
// megabytes; only ties on both go to compareQueue. The order is compareQueue's.
func (c *cycle) order() {
	keys := c.scratch.queueKeys
	for j := range c.projects {
		q := c.projects[j].queue
		keys = keys[:0]
		for _, wi := range q {
			ws := &c.wls[wi]
			keys = append(keys, queueKey{prio: ws.prio, wi: wi, queued: c.pend[ws.pend].queued})
		}
		slices.SortFunc(keys, func(a, b queueKey) int {
			if a.prio != b.prio {
				return cmp.Compare(b.prio, a.prio)
			}
			if a.queued != b.queued {
				return cmp.Compare(a.queued, b.queued)
			}
			return c.compareQueue(a.wi, b.wi)
		})
		for i := range keys {
			q[i] = keys[i].wi
		}
	}
	c.scratch.queueKeys = keys
}

// queueKey is what order sorts a queue by before it looks at the workloads.
type queueKey struct {
	prio, wi int32
	queued   int64
}
