package scheduler

// This file keeps work that would be evicted at once off the capacity a waiting workload needs
// (S19 over time). Best-effort queueing (S12) lets work behind a blocked workload start on what
// is free; but when the blocked workload may evict that work — lower-priority preemptible work
// of its own project (S16), or borrowed work of another project while it is inside its
// deserved quota (S17) — the work started only to be evicted once a little more capacity frees
// up: in the demo, a low-priority Job admitted beside a waiting 8-GPU gang of its project was
// preempted by it seconds later, and so on while the gang gathered its GPUs.
//
// So a waiting workload claims what it could get by eviction, and what it claims is kept from
// the work it could evict while it waits; the refused workload's reason names the claimant
// (InsufficientCapacity, "held back for ..."). Work it may not evict — higher priority, other
// projects' in-quota work, non-preemptible work — still starts there.
//
//   - S16: a workload that free capacity cannot take, though it could fit in a pool once the
//     lower-priority preemptible work of its project there were gone, claims the pool: its
//     project's lower-priority preemptible work is not placed there while it waits.
//   - S17 (S11's first phase: deserved quota before borrowing, in each pool): a workload inside
//     its project's deserved quota in a pool claims its GPUs there; another project may borrow
//     there only what the waiting in-quota claims leave free.
//
// Each project's first waiting workloads claim before admission begins, whatever the order
// projects are taken in (S11 takes them pool by pool, by their first pool); any other claims
// once its own attempt has failed for want of capacity. A claim ends when its workload is
// admitted. What earlier cycles set aside (nominated workloads, reserve.go) is not held back:
// the claim comes too late for it, and its victims are gone already.

// poolClaims are a pool's claims, kept for the questions heldBack asks.
type poolClaims struct {
	// preempt are the S16 claimants by project
	preempt map[int32][]int32
	// foreseen are the S16 claims, by project, of workloads that fit in the pool but wait for
	// their pods (foreseen_pods.go): only what they need is kept from their project's
	// lower-priority work
	foreseen map[int32][]foreseenClaim
	// inQuota is the GPUs claimed by waiting workloads inside their deserved quota (S17): in
	// all, by project, by department; one claimant of each project names it to those refused
	inQuota          int64
	inQuotaByProject map[int32]int64
	inQuotaByDept    map[int32]int64
	inQuotaNamed     []int32 // the in-quota claimants, in the order they claimed
}

// inQuotaClaim is one pool's in-quota claim of a workload, kept to take back when it is
// admitted (admittedClaimant).
type inQuotaClaim struct {
	pool int32
	gpus int64
}

// claimedPool marks that a project has claimed a pool under S16 in this cycle: its first
// claimant is its highest priority one (queues are in S10 order), which holds back all its
// later ones would while it waits.
func (c *cycle) claimedPool(project, pool int32) *bool {
	if c.claimedBy == nil {
		c.claimedBy = make([]bool, len(c.projects)*len(c.pools))
	}
	return &c.claimedBy[int(project)*len(c.pools)+int(pool)]
}

// poolClaimsOf is the pool's claims, made ready for one more.
func (c *cycle) poolClaimsOf(pool int32) *poolClaims {
	if c.claims == nil {
		c.claims = make([]poolClaims, len(c.pools))
	}
	pc := &c.claims[pool]
	if pc.preempt == nil {
		pc.preempt, pc.inQuotaByProject, pc.inQuotaByDept = map[int32][]int32{}, map[int32]int64{}, map[int32]int64{}
	}
	return pc
}

// claimHeads lets each project's first waiting workloads claim before any attempt of the
// cycle: under S16 its first if free capacity cannot take it, under S17 its first inside its
// deserved quota.
func (c *cycle) claimHeads() {
	for j := range c.projects {
		p := &c.projects[j]
		first, tried := true, 0
		for _, wi := range p.queue {
			ws := &c.wls[wi]
			if ws.outcome != waiting || c.pend[ws.pend].nominated || ws.waitEvictions || c.isExtra(ws) {
				continue
			}
			unit := c.pendingUnit(wi)
			gpus := c.unitGPUs(unit)
			if gpus == 0 {
				break
			}
			if first && !c.freeCouldTake(p, gpus) {
				c.claimPreempt(wi, unit, gpus)
			}
			first = false
			if c.claimInQuota(wi, unit, gpus) {
				break
			}
			if tried++; tried == 4 {
				break // a few looks for an in-quota one: enough for what S11 orders
			}
		}
	}
}

// freeCouldTake reports whether some pool of the project has gpus free.
func (c *cycle) freeCouldTake(p *projectState, gpus int64) bool {
	for _, pool := range p.pools {
		if c.pools[pool].freeGPUs >= gpus {
			return true
		}
	}
	return false
}

// pendingUnit is what a workload's next attempt places as one: all its pending pods when it
// is a gang or suspended (a group of them when each group is a gang), else the largest of them. The slice is the cycle's, until the next
// call.
func (c *cycle) pendingUnit(wi int32) []int32 {
	ws := &c.wls[wi]
	unit := c.toPlace(ws, c.claimBuf[:0])
	c.claimBuf = unit[:0]
	if !ws.suspended && ws.w.Gang.GroupSize > 0 && c.pend[ws.pend].gang > 1 && len(unit) > 1 {
		c.byGangGroup(unit) // each group is a gang of its own (S5): the first one
		return unit[:c.groupRun(unit)]
	}
	if ws.suspended || c.pend[ws.pend].gang > 1 || len(unit) < 2 {
		return unit
	}
	largest := 0
	for i, k := range unit {
		if c.pods[k].req.GPUs > c.pods[unit[largest]].req.GPUs {
			largest = i
		}
	}
	unit[0] = unit[largest]
	return unit[:1]
}

// claimPools is the claim of a workload whose attempt failed for want of capacity.
func (c *cycle) claimPools(wi int32, unit []int32) {
	ws := &c.wls[wi]
	if ws.waitEvictions || c.isExtra(ws) {
		return // its place is reserved; replicas beyond a minimum evict nobody (S26)
	}
	if gpus := c.unitGPUs(unit); gpus > 0 {
		c.claimPreempt(wi, unit, gpus)
		c.claimInQuota(wi, unit, gpus)
	}
}

// claimPreempt claims, under S16, each pool of the workload where it could fit once the
// lower-priority preemptible work of its project were gone.
func (c *cycle) claimPreempt(wi int32, unit []int32, gpus int64) {
	ws := &c.wls[wi]
	for _, pool := range c.projects[ws.project].pools {
		done := c.claimedPool(ws.project, pool)
		if *done || !c.mayEverFit(wi, unit, pool, gpus) || !c.couldPreemptInto(wi, pool, gpus) {
			continue
		}
		*done = true
		pc := c.poolClaimsOf(pool)
		pc.preempt[ws.project] = append(pc.preempt[ws.project], wi)
	}
}

// claimInQuota claims, under S17, the workload's GPUs in each of its pools where they keep its
// project (and its department) inside deserved quota and where it could fit once all borrowed
// work were gone; it reports whether it claimed.
func (c *cycle) claimInQuota(wi int32, unit []int32, gpus int64) bool {
	ws := &c.wls[wi]
	if _, done := c.inQuotaClaims[wi]; done {
		return true
	}
	from := int32(len(c.inQuotaList))
	for _, pool := range c.projects[ws.project].pools {
		if !c.inDeserved(wi, pool, gpus) || !c.deptInDeserved(wi, pool, gpus) || !c.mayEverFit(wi, unit, pool, gpus) ||
			!c.couldReclaimInto(wi, pool, gpus) {
			continue
		}
		pc := c.poolClaimsOf(pool)
		pc.inQuota += gpus
		pc.inQuotaByProject[ws.project] += gpus
		pc.inQuotaByDept[ws.dept] += gpus
		pc.inQuotaNamed = append(pc.inQuotaNamed, wi)
		c.inQuotaList = append(c.inQuotaList, inQuotaClaim{pool: pool, gpus: gpus})
	}
	to := int32(len(c.inQuotaList))
	if to == from {
		return false
	}
	if c.inQuotaClaims == nil {
		c.inQuotaClaims = map[int32]claimSpan{}
	}
	c.inQuotaClaims[wi] = claimSpan{from, to}
	return true
}

// claimSpan is where a claimant's in-quota claims are in cycle.inQuotaList: one list for the
// cycle rather than a slice allocated for each of thousands of claimants.
type claimSpan struct{ from, to int32 }

// admittedClaimant ends a workload's in-quota claims: it was admitted (or its place reserved).
func (c *cycle) admittedClaimant(wi int32) {
	span, ok := c.inQuotaClaims[wi]
	if !ok {
		return
	}
	ws := &c.wls[wi]
	for _, cl := range c.inQuotaList[span.from:span.to] {
		pc := &c.claims[cl.pool]
		pc.inQuota -= cl.gpus
		pc.inQuotaByProject[ws.project] -= cl.gpus
		pc.inQuotaByDept[ws.dept] -= cl.gpus
	}
	delete(c.inQuotaClaims, wi)
}

// freeSoon is the GPUs of the pool that are free, or held by pods terminating now or by
// workloads evicted in this cycle (beyond what their preemptors take, free soon).
func (c *cycle) freeSoon(pool int32) int64 {
	avail := c.pools[pool].freeGPUs + c.terminatingIn(pool)
	if c.evictedGPUs != nil {
		avail += c.evictedGPUs[pool]
	}
	return avail
}

// mayEverFit reports whether the unit's pods fit the pool's nodes at all and its quotas allow
// it there.
func (c *cycle) mayEverFit(wi int32, unit []int32, pool int32, gpus int64) bool {
	for _, k := range unit {
		if !c.canEverHost(pool, &c.pods[k]) {
			return false
		}
	}
	var f failure
	return c.quotaAllows(wi, pool, gpus, &f) && (!c.pend[c.wls[wi].pend].topology || c.neverFits(wi, unit, pool) == nil)
}

// couldPreemptInto is a necessary condition for the unit to fit in the pool once all the
// lower-priority work of its project there is gone (S16).
func (c *cycle) couldPreemptInto(wi, pool int32, gpus int64) bool {
	ws := &c.wls[wi]
	avail := c.freeSoon(pool)
	for _, v := range c.projects[ws.project].ranked[pool] {
		if vs := &c.wls[v]; !vs.evicted && !vs.terminating && vs.preemptible && vs.prio < ws.prio {
			avail += c.gpusIn(v, pool)
		}
	}
	return avail >= gpus
}

// couldReclaimInto is a necessary condition for the unit, inside its deserved quota, to fit in
// the pool once every other project's borrowed work there is gone (S17): what S11 gives
// deserved quota before anyone borrows.
func (c *cycle) couldReclaimInto(wi, pool int32, gpus int64) bool {
	if !c.inDeserved(wi, pool, gpus) {
		return false
	}
	own := &c.projects[c.wls[wi].project].shares[pool]
	return c.freeSoon(pool)+c.borrowedIn(pool)-max(own.running-own.quota.Deserved, 0) >= gpus
}

// borrowedIn is the GPUs every project borrowed in the pool at the snapshot: as much as reclaim
// could ever take there (running GPUs only fall during a cycle).
func (c *cycle) borrowedIn(pool int32) int64 {
	if c.borrowed == nil {
		c.borrowed = make([]int64, len(c.pools))
		for p := range c.pools {
			for _, k := range c.borrowersIn(int32(p)) {
				sh := &c.projects[k].shares[p]
				c.borrowed[p] += sh.running - sh.quota.Deserved
			}
		}
	}
	return c.borrowed[pool]
}

// noteEvicted counts a victim of the cycle's plan in evictedGPUs.
func (c *cycle) noteEvicted(v int32) {
	if c.evictedGPUs == nil {
		c.evictedGPUs = make([]int64, len(c.pools))
	}
	ws := &c.wls[v]
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		if ps := &c.pods[k]; ps.bound && !ps.terminating {
			if p := c.nodes[ps.node].pool; p >= 0 {
				c.evictedGPUs[p] += ps.req.GPUs
			}
		}
	}
}

// terminatingIn is the GPUs that pods terminating at the snapshot hold in the pool: free soon.
func (c *cycle) terminatingIn(pool int32) int64 {
	if c.terminating == nil {
		c.terminating = make([]int64, len(c.pools))
		for k := range c.pods {
			if ps := &c.pods[k]; ps.bound && ps.terminating {
				if p := c.nodes[ps.node].pool; p >= 0 {
					c.terminating[p] += ps.req.GPUs
				}
			}
		}
	}
	return c.terminating[pool]
}

// inDeserved reports whether gpus more keep the workload's project inside its deserved quota
// in the pool (S17's condition for reclaim).
func (c *cycle) inDeserved(wi, pool int32, gpus int64) bool {
	ws := &c.wls[wi]
	sh := &c.projects[ws.project].shares[pool]
	return sh.alloc+gpus <= sh.quota.Deserved
}

// deptInDeserved is inDeserved for the workload's department.
func (c *cycle) deptInDeserved(wi, pool int32, gpus int64) bool {
	ws := &c.wls[wi]
	d := &c.depts[ws.dept]
	return d.unbounded || d.shares[pool].alloc+gpus <= d.shares[pool].quota.Deserved
}

// heldBack reports whether placing gpus of workload wi in the pool is refused for a waiting
// claimant (S16: its project, higher priority, claimed the pool; S17: wi's project would
// borrow there what waiting in-quota work of other projects claims), and notes it in f.
func (c *cycle) heldBack(wi, pool int32, gpus int64, f *failure) bool {
	ws := &c.wls[wi]
	if c.claims == nil || c.claims[pool].preempt == nil || c.pend[ws.pend].nominated || !ws.preemptible && !c.isExtra(ws) {
		return false // no claims; what an earlier cycle set aside; never evicted
	}
	pc := &c.claims[pool]
	by := int32(-1)
	for _, w := range pc.preempt[ws.project] {
		if w != wi && c.wls[w].outcome == waiting && ws.prio < c.wls[w].prio {
			by = w
			break
		}
	}
	if by < 0 && len(pc.foreseen[ws.project]) > 0 {
		by = c.foreseenClaimant(wi, pool, gpus, pc)
	}
	if by < 0 && pc.inQuota > 0 {
		by = c.inQuotaClaimant(wi, pool, gpus, pc)
	}
	if by < 0 {
		return false
	}
	f.note(failure{reason: InsufficientCapacity, pool: pool, amount: gpus, bound: c.pools[pool].freeGPUs, held: true, head: by})
	return true
}

// inQuotaClaimant is a claimant of another project whose in-quota claim placing gpus of
// workload wi in the pool would leave short, or -1: wi's project would borrow there, and so,
// for claimants of other departments, would its department.
func (c *cycle) inQuotaClaimant(wi, pool int32, gpus int64, pc *poolClaims) int32 {
	ws := &c.wls[wi]
	if c.inDeserved(wi, pool, gpus) {
		return -1 // inside its own deserved quota: not borrowed, never reclaimed
	}
	need := pc.inQuotaByDept[ws.dept] - pc.inQuotaByProject[ws.project]
	if !c.deptInDeserved(wi, pool, gpus) {
		need += pc.inQuota - pc.inQuotaByDept[ws.dept]
	}
	if need <= 0 || c.pools[pool].freeGPUs-gpus >= need {
		return -1
	}
	for _, claimant := range pc.inQuotaNamed {
		if w := &c.wls[claimant]; w.project != ws.project && w.outcome == waiting {
			return claimant
		}
	}
	return -1
}
