package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/arbiterhq/arbiter/internal/prefetch"
)

// maxBinds bounds how many pods the cycle binds: pending pods, and of those that need GPUs no
// more than are free, as what evictions free goes to preemptors, which are bound in a later cycle.
func (c *cycle) maxBinds() int {
	var gpuPods, otherPods, free int64
	for k := range c.pods {
		if ps := &c.pods[k]; !ps.bound && !ps.terminating && !c.wls[ps.wl].suspended {
			if ps.req.GPUs > 0 {
				gpuPods++
			} else {
				otherPods++
			}
		}
	}
	for p := range c.pools {
		free += c.pools[p].freeGPUs
	}
	return int(otherPods + min(gpuPods, free))
}

// advance moves a project's head past workloads that are no longer waiting.
func (c *cycle) advance(j int32) bool {
	p := &c.projects[j]
	for p.next < len(p.queue) && c.wls[p.queue[p.next]].outcome != waiting {
		p.next++
	}
	if p.next == len(p.queue) {
		return false
	}
	// Admission is a chain: each attempt changes what the next one is. Its cache misses are
	// paid one after another unless asked for ahead (package prefetch). The new head's first
	// pod and pending state are asked for now, to arrive while the fair share order is put
	// right, and so is the state of the workload behind it, read when that one becomes the
	// head: by then about as many attempts have passed as there are projects, and a few cache
	// lines per project stay in the cache that long.
	ws := &c.wls[p.queue[p.next]]
	prefetch.Of(&c.pods[ws.firstPod])
	prefetch.Of(&c.pend[ws.pend])
	if p.next+1 < len(p.queue) {
		prefetch.Of(&c.wls[p.queue[p.next+1]])
	}
	return true
}

// admit is phase 4.
func (c *cycle) admit() {
	c.binds = reuse(c.scratch.binds, c.maxBinds())
	c.claimHeads()
	// Workloads for which an earlier cycle evicted, or that it resumed, go first, onto free
	// capacity only, with what was set aside for them given back: it is theirs (S19).
	for j := range c.projects {
		for _, wi := range c.projects[j].queue {
			if ws := &c.wls[wi]; c.pend[ws.pend].nominated && !ws.waitEvictions && ws.outcome == waiting {
				c.giveBack(wi)
				c.attempt(wi, false)
			}
		}
	}

	c.buildArenas()
	// Pools take turns, one attempt each, so that each pool's order is its own (S11).
	for live := c.liveArenas(); live > 0; live = c.liveArenas() {
		for pool := range c.poolHeaps {
			if h := &c.poolHeaps[pool]; h.len() > 0 {
				c.admitNext(h)
			}
		}
	}

}

// blockBehind is strict queueing (S12): nothing behind a blocked head is admitted.
func (c *cycle) blockBehind(j, head int32) {
	p := &c.projects[j]
	for _, wi := range p.queue[p.next:] {
		if ws := &c.wls[wi]; ws.outcome == waiting {
			ws.outcome, *c.failOf(ws) = skipped, failure{reason: BehindStrictHead, pool: -1, head: head}
		}
	}
}

// attempt tries to place a workload's pending pods: a gang (or a suspended workload) as one
// unit, otherwise pod by pod. With allowEvict it may reclaim and preempt (S18).
func (c *cycle) attempt(wi int32, allowEvict bool) {
	ws := &c.wls[wi]
	if ws.evicted || c.pend[ws.pend].preempted {
		// A workload of pods placed one by one, running some and waiting with others, that
		// this cycle or an earlier one evicts: placing its others now would leave it
		// running, and its preemptor waiting for it for ever (S19); nor does it evict.
		*c.failOf(ws) = failure{reason: InsufficientCapacity, pool: -1}
		return
	}
	if c.isExtra(ws) {
		if !c.extrasMayGo(wi) {
			ws.outcome, *c.failOf(ws) = skipped, failure{reason: InsufficientCapacity, pool: -1}
			return
		}
		allowEvict = false
	}
	pending := c.toPlace(ws, c.unitBuf[:0])
	// bigger pods first: they are the hard ones to fit
	slices.SortStableFunc(pending, func(a, b int32) int { return cmp.Compare(c.pods[b].req.GPUs, c.pods[a].req.GPUs) })
	c.unitBuf = pending
	if c.awaitsPods(ws) {
		c.awaitPods(wi, pending) // some of its pods are not made yet (foreseen_pods.go)
		return
	}
	one := ws.suspended || c.pend[ws.pend].gang > 1
	grouped := one && !ws.suspended && ws.w.Gang.GroupSize > 0
	if grouped {
		c.byGangGroup(pending)
	}
	reserved, placed, incomplete, have := false, false, false, int32(0)
	for i := 0; i < len(pending); {
		n := 1
		if one {
			n = len(pending)
		}
		if grouped {
			// each group is a gang of its own (S5), placed whole once all its pods exist
			n = c.groupRun(pending[i:])
			if h := c.groupPods(ws, c.pods[pending[i]].pod.GangGroup); h < ws.w.Gang.GroupSize {
				i, incomplete, have = i+n, true, h
				continue
			}
		}
		ok, evicted := c.tryUnit(wi, pending[i:i+n], allowEvict)
		if !ok {
			if reserved {
				// what is set aside waits for its victims; the rest is tried again then
				*c.failOf(ws) = failure{reason: WaitingForEvictions, pool: -1}
			}
			return
		}
		reserved, placed = reserved || evicted, true
		i += n
	}
	if incomplete && !reserved {
		// the groups that are whole are placed; the workload waits for the others' pods
		if !placed {
			ws.outcome = skipped
		}
		*c.failOf(ws) = failure{reason: GangIncomplete, pool: -1, amount: int64(ws.w.Gang.GroupSize), bound: int64(have)}
		return
	}
	c.admittedClaimant(wi)
	switch {
	case reserved:
		ws.outcome = reservedBehindEvictions
		*c.failOf(ws) = failure{reason: WaitingForEvictions, pool: -1}
	case ws.suspended:
		ws.outcome = admitted
		c.plan.Resumes = append(c.plan.Resumes, Resume{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name,
			Project: c.projects[ws.project].name, NodePool: c.pools[c.nodes[c.pods[pending[0]].node].pool].pool.Name,
			GPUs: c.podGPUs(ws)})
	default:
		ws.outcome = admitted
	}
}

// byGangGroup orders a workload's pods to place by their group, keeping the order within each.
func (c *cycle) byGangGroup(pending []int32) {
	slices.SortStableFunc(pending, func(a, b int32) int {
		return cmp.Compare(c.pods[a].pod.GangGroup, c.pods[b].pod.GangGroup)
	})
}

// groupRun is how many pods at the start of pending are of the first one's group.
func (c *cycle) groupRun(pending []int32) int {
	g := c.pods[pending[0]].pod.GangGroup
	n := 1
	for n < len(pending) && c.pods[pending[n]].pod.GangGroup == g {
		n++
	}
	return n
}

// groupPods counts the pods of one group of the workload that are placed or waiting.
func (c *cycle) groupPods(ws *wlState, group string) int32 {
	have := int32(0)
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		if ps := &c.pods[k]; ps.pod.GangGroup == group && !ps.terminating {
			have++
		}
	}
	return have
}

// toPlace appends to buf the workload's pods still to be placed: not bound, not placed in
// this cycle, not terminating.
func (c *cycle) toPlace(ws *wlState, buf []int32) []int32 {
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		if ps := &c.pods[k]; !ps.bound && ps.node < 0 && !ps.terminating {
			buf = append(buf, k)
		}
	}
	return buf
}

// podGPUs is the GPUs all of a workload's pods request.
func (c *cycle) podGPUs(ws *wlState) int64 {
	var n int64
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		n += c.pods[k].req.GPUs
	}
	return n
}

func (c *cycle) unitGPUs(unit []int32) int64 {
	var n int64
	for _, k := range unit {
		n += c.pods[k].req.GPUs
	}
	return n
}

// tryUnit is S18 for one unit: free capacity, else reclaim, else preemption, else both (S30). It reports
// whether the unit was placed and whether evictions were needed for it.
func (c *cycle) tryUnit(wi int32, unit []int32, allowEvict bool) (ok, evicted bool) {
	ws := &c.wls[wi]
	p := &c.projects[ws.project]
	mark := c.st.mark()
	f := failure{pool: -1}
	for _, pool := range p.pools {
		if c.placeIn(wi, unit, pool, &f) {
			c.commit(wi, mark)
			return true, false
		}
	}
	c.reclaimSpared, c.preemptSpared = 0, 0
	switch {
	case !allowEvict:
	case ws.waitEvictions:
		f = failure{reason: WaitingForEvictions, pool: -1}
	case c.delayed(ws, &f):
	case c.reclaim(wi, unit), c.preempt(wi, unit), c.reclaimAfterPreemption(wi, unit):
		return true, true
	case c.reclaimSpared > 0 && (c.preemptSpared == 0 || c.reclaimSpared <= c.preemptSpared):
		f.delay, f.until = reclaimRuntime, c.reclaimSpared
	case c.preemptSpared > 0:
		f.delay, f.until = preemptionRuntime, c.preemptSpared
	}
	if f.reason == "" {
		f.reason = NoMatchingNodes // the project may use no node pool at all
	}
	*c.failOf(ws) = f
	if allowEvict && (f.reason == InsufficientCapacity || f.reason == TopologyUnsatisfiable) {
		c.claimPools(wi, unit)
	}
	return false, false
}

// placeIn checks the unit against the pool's nodes and the quotas (S13, S14, S21) and, if all
// is well, places it, leaving the placements in the statement. Otherwise it notes why not.
func (c *cycle) placeIn(wi int32, unit []int32, pool int32, f *failure) bool {
	for _, k := range unit {
		if !c.canEverHost(pool, &c.pods[k]) {
			f.note(failure{reason: NoMatchingNodes, pool: pool})
			return false
		}
	}
	gpus := c.unitGPUs(unit)
	if !c.quotaAllows(wi, pool, gpus, f) || c.heldBack(wi, pool, gpus, f) {
		return false
	}
	asks := c.pend[c.wls[wi].pend].topology
	if asks {
		if miss := c.neverFits(wi, unit, pool); miss != nil { // S29: no domain ever has room
			f.note(failure{reason: TopologyUnsatisfiable, pool: pool, amount: gpus, bound: miss.free, topo: miss})
			return false
		}
	}
	if free := c.pools[pool].freeGPUs; gpus > free {
		f.note(failure{reason: InsufficientCapacity, pool: pool, amount: gpus, bound: free})
		return false
	}
	if asks {
		return c.placeTopology(wi, unit, pool, gpus, f) // S29
	}
	mark := c.st.mark()
	for _, k := range unit {
		n := c.chooseNode(pool, &c.pods[k])
		if n < 0 {
			c.st.rollback(mark)
			f.note(failure{reason: InsufficientCapacity, pool: pool, amount: gpus, bound: c.pools[pool].freeGPUs})
			return false
		}
		c.st.place(k, n)
	}
	return true
}

// quotaAllows is S13 and S14 for the project and its department.
func (c *cycle) quotaAllows(wi, pool int32, gpus int64, f *failure) bool {
	ws := &c.wls[wi]
	proj := &c.projects[ws.project].shares[pool]
	dept := &c.depts[ws.dept]
	dsh := &dept.shares[pool]
	switch {
	case proj.limitExceeded(gpus):
		f.note(failure{reason: OverLimit, pool: pool, amount: proj.alloc + gpus, bound: proj.quota.Limit})
	case !dept.unbounded && dsh.limitExceeded(gpus):
		f.note(failure{reason: OverLimit, pool: pool, dept: true, amount: dsh.alloc + gpus, bound: dsh.quota.Limit})
	case !ws.preemptible && proj.nonPreemptibleExceeded(gpus):
		f.note(failure{reason: NonPreemptibleOverQuota, pool: pool, amount: proj.allocNP + gpus, bound: proj.quota.Deserved})
	case !ws.preemptible && !dept.unbounded && dsh.nonPreemptibleExceeded(gpus):
		f.note(failure{reason: NonPreemptibleOverQuota, pool: pool, dept: true, amount: dsh.allocNP + gpus, bound: dsh.quota.Deserved})
	default:
		return true
	}
	return false
}

// fits reports whether the unit could be placed in the pool now, leaving no trace.
func (c *cycle) fits(wi int32, unit []int32, pool int32) bool {
	mark := c.st.mark()
	var f failure
	ok := c.placeIn(wi, unit, pool, &f)
	c.st.rollback(mark)
	return ok
}

// commit records what an attempt decided: binds (or, for a resumed workload or one waiting
// for its victims, the nodes set aside) and evictions.
func (c *cycle) commit(wi int32, mark int) {
	ws := &c.wls[wi]
	ops := c.st.commit(mark)
	evicting := false
	for i := range ops {
		if ops[i].kind == opEvict && c.wls[ops[i].id].evicted {
			evicting = true
		}
	}
	for i := range ops {
		o := &ops[i]
		switch o.kind {
		case opPlace:
			if evicting {
				c.pods[o.id].reserved = true
				if nominated := &c.pend[ws.pend].nominatedNodes; !slices.Contains(*nominated, o.node) {
					*nominated = append(*nominated, o.node)
				}
				continue
			}
			if ws.suspended {
				continue
			}
			c.binds = append(c.binds, placedPod{wi: wi, pod: o.id, node: o.node})
		case opEvict:
			v := &c.wls[o.id]
			if !v.evicted || v.evictionRecorded {
				continue // given back while pruning
			}
			v.evictionRecorded = true
			vp := &c.projects[v.project]
			mode := vp.policy.PreemptionMode
			if mode != Suspend || !CanSuspend(v.w.Kind) || c.isExtra(v) {
				mode = Terminate // replicas beyond a minimum go one by one (S26)
			}
			c.evictedOrder = append(c.evictedOrder, o.id)
			c.noteEvicted(o.id)
			if c.isExtra(v) && c.addToEviction(v, ws.w.UID, o.rule) {
				continue
			}
			e := Eviction{Workload: v.w.UID, Namespace: v.w.Namespace,
				Name: v.w.Name, Project: vp.name, Mode: mode, Preemptor: ws.w.UID, Rule: o.rule, GPUs: v.boundGPUs}
			if c.isExtra(v) {
				e.Pods = c.extraPods(v)
			}
			c.plan.Evictions = append(c.plan.Evictions, e)
		}
	}
}

// delayed is S27's preemption delay: a workload that has waited less than its project's
// preemptionDelaySeconds may not evict anything yet; the failure says until when.
func (c *cycle) delayed(ws *wlState, f *failure) bool {
	secs := c.projects[ws.project].policy.PreemptionDelaySeconds
	if secs <= 0 {
		return false
	}
	until := ws.w.QueuedAt.Add(time.Duration(secs) * time.Second)
	if !c.snap.Now.Before(until) {
		return false
	}
	f.delay, f.until = preemptionDelay, until.UnixNano()
	return true
}

// reclaimRuntimeLeft reports whether a borrowed victim is still protected from reclaim by its
// project's reclaimMinRuntimeSeconds (S27), noting when it stops being.
func (c *cycle) reclaimRuntimeLeft(v *wlState) bool {
	return c.runtimeLeft(v, c.projects[v.project].policy.ReclaimMinRuntimeSeconds, &c.reclaimSpared)
}

// minRuntimeLeft reports whether a victim is still protected by its project's minimum runtime
// (S16), noting when it stops being.
func (c *cycle) minRuntimeLeft(v *wlState) bool {
	return c.runtimeLeft(v, c.projects[v.project].policy.MinRuntimeSeconds, &c.preemptSpared)
}

// runtimeLeft reports whether a victim has run less than secs, lowering earliest (0: none yet)
// to when it will have.
func (c *cycle) runtimeLeft(v *wlState, secs int64, earliest *int64) bool {
	if secs <= 0 {
		return false
	}
	until := v.w.StartedAt.Add(time.Duration(secs) * time.Second)
	if !c.snap.Now.Before(until) {
		return false
	}
	if u := until.UnixNano(); *earliest == 0 || u < *earliest {
		*earliest = u
	}
	return true
}

// placedPod is a bind decided by an attempt; the report writes it out as a Bind (see bindsOut).
type placedPod struct{ wi, pod, node int32 }

// bindsOut writes the cycle's binds into the plan, in the order they were decided. Doing it
// here rather than at each attempt keeps reading the snapshot's workloads and pods (a cache
// miss each, at tens of thousands) out of the admission loop, and lets it run beside the
// running report.
func (c *cycle) bindsOut() {
	if len(c.binds) == 0 {
		return
	}
	c.plan.Binds = make([]Bind, len(c.binds))
	for i, b := range c.binds {
		ahead(c.binds, i, func(b *placedPod) { c.state(b.wi); prefetch.Of(&c.pods[b.pod]) },
			func(b *placedPod) { prefetch.Of(c.wls[b.wi].w); prefetch.Of(c.pods[b.pod].pod) })
		pod := c.pods[b.pod].pod
		c.plan.Binds[i] = Bind{Workload: c.wls[b.wi].w.UID,
			Pod: PodRef{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name}, Node: c.nodes[b.node].node.Name}
	}
}
