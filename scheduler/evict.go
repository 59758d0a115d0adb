package scheduler

import (
	"cmp"
	"slices"
)

// reclaim is S17: a unit that fits inside its project's deserved quota takes back GPUs that
// other projects borrow, from the project furthest above its fair share first (with S28, the
// share its past use leaves it), its lowest-ranked borrowed workload first. It commits and reports true when the unit is placed.
func (c *cycle) reclaim(wi int32, unit []int32) bool {
	ws := &c.wls[wi]
	gpus := c.unitGPUs(unit)
	if gpus == 0 {
		return false // only GPUs are guaranteed
	}
	proj := &c.projects[ws.project]
	for _, pool := range proj.pools {
		if !c.inDeserved(wi, pool, gpus) || (!ws.preemptible && proj.shares[pool].nonPreemptibleExceeded(gpus)) {
			continue
		}
		// only a department inside its own deserved quota may take from other departments
		deptInQuota := c.deptInDeserved(wi, pool, gpus)
		if !c.reclaimCouldFit(ws.project, pool, deptInQuota, gpus) {
			continue
		}
		next := func() candidate {
			return candidate{wl: c.nextReclaimVictim(wi, pool, deptInQuota), pool: pool, rule: RuleReclaim}
		}
		if c.evictUntilFits(wi, unit, next, nil) {
			return true
		}
	}
	return false
}

// startedWhileWaiting reports whether v started after preemptor p began to wait: v was
// admitted while p waited, on capacity p could not use then, and evicting it now for p would
// be thrash (S19 over time). Such work is left to finish; p's claim (claim.go) keeps more of it
// from starting where p waits. Without a waiting time (a snapshot that does not say) nothing
// is spared.
func (c *cycle) startedWhileWaiting(v, p *wlState) bool {
	return !p.w.WaitingSince.IsZero() && v.start >= p.w.WaitingSince.UnixNano()
}

// placedNow reports whether more of a running workload was placed in this cycle (pods placed
// one by one): it is not evicted in the same cycle, which would leave those pods running.
func (c *cycle) placedNow(v *wlState) bool {
	if v.outcome == admitted || v.outcome == reservedBehindEvictions {
		return true
	}
	if v.pendingPods == 0 {
		return false
	}
	for k := v.firstPod; k < v.firstPod+v.pods; k++ { // some placed, the attempt failed later
		if ps := &c.pods[k]; !ps.bound && ps.node >= 0 {
			return true
		}
	}
	return false
}

// mayReclaimFrom reports whether project k's borrowed work in the pool may be reclaimed for
// a workload of project j: k borrows, and across departments k's department borrows too.
func (c *cycle) mayReclaimFrom(k, j, pool int32, deptInQuota bool) bool {
	if k == j {
		return false
	}
	sh := &c.projects[k].shares[pool]
	if sh.running <= sh.quota.Deserved {
		return false
	}
	dk, dj := c.projects[k].dept, c.projects[j].dept
	if dk == dj {
		return true
	}
	dsh := &c.depts[dk].shares[pool]
	return deptInQuota && dsh.running > dsh.quota.Deserved
}

// borrowersIn lists, in project order, the projects that borrowed in the pool at the
// snapshot: the only ones reclaim may take from. Running GPUs only fall during a cycle
// (evictions) or come back to what they were (rollbacks), so the list, made at first use, holds
// every project that borrows at any later moment; mayReclaimFrom checks the moment.
func (c *cycle) borrowersIn(pool int32) []int32 {
	if c.borrowers == nil {
		c.borrowers = make([][]int32, len(c.pools))
	}
	if c.borrowers[pool] == nil {
		list := make([]int32, 0, 16)
		for k := range c.projects {
			if sh := &c.projects[k].shares[pool]; sh.running > sh.quota.Deserved {
				list = append(list, int32(k))
			}
		}
		c.borrowers[pool] = list
	}
	return c.borrowers[pool]
}

// reclaimCouldFit is a cheap necessary condition: free GPUs plus everything reclaimable projects run.
func (c *cycle) reclaimCouldFit(j, pool int32, deptInQuota bool, gpus int64) bool {
	avail := c.pools[pool].freeGPUs
	for _, k := range c.borrowersIn(pool) {
		if avail >= gpus {
			return true
		}
		if c.mayReclaimFrom(k, j, pool, deptInQuota) {
			avail += c.projects[k].shares[pool].running
		}
	}
	return avail >= gpus
}

// borrowedTail is project k's lowest-ranked borrowed workload in the pool that may be reclaimed
// for workload p, or -1. Walking the ranking from its end, a workload is borrowed while the GPUs
// up to and including it exceed the deserved quota (S15's ranking, docs/rules.md).
func (c *cycle) borrowedTail(k, pool int32, p *wlState) int32 {
	sh := &c.projects[k].shares[pool]
	cum := sh.running
	ranked := c.projects[k].ranked[pool]
	for i := len(ranked) - 1; i >= 0 && cum > sh.quota.Deserved; i-- {
		v := &c.wls[ranked[i]]
		if v.evicted {
			continue // already taken off running
		}
		if !v.preemptible {
			return -1 // non-preemptible work ranks first: nothing earlier may go
		}
		if !v.terminating && !c.placedNow(v) && !c.startedWhileWaiting(v, p) && !c.reclaimRuntimeLeft(v) {
			return ranked[i]
		}
		// terminating work is going anyway; young work stays (S27), and so does work that
		// started while the reclaiming workload waited (S19), but earlier borrowed work may
		// still go
		cum -= c.gpusIn(ranked[i], pool)
	}
	return -1
}

func (c *cycle) nextReclaimVictim(wi, pool int32, deptInQuota bool) int32 {
	j := c.wls[wi].project
	best, bestProject := int32(-1), int32(-1)
	var bestKey fairKey
	for _, k := range c.borrowersIn(pool) {
		if !c.mayReclaimFrom(k, j, pool, deptInQuota) {
			continue
		}
		v := c.borrowedTail(k, pool, &c.wls[wi])
		if v < 0 {
			continue
		}
		key := c.reclaimKey(k, pool)
		if bestProject < 0 || key.compare(bestKey) > 0 {
			best, bestProject, bestKey = v, k, key
		}
	}
	return best
}

// preempt is S16: a unit may evict its own project's preemptible running work of strictly
// lower priority, lowest priority first, then by the project's preemption order, sparing
// work younger than the minimum runtime. The order runs across the project's node pools: the
// unit goes to the pool where the shortest prefix of it makes room (the project's order of
// pools breaks ties), so it never evicts higher-priority work in one pool while lower-priority
// work in another would have made room.
func (c *cycle) preempt(wi int32, unit []int32) bool {
	ws := &c.wls[wi]
	gpus := c.unitGPUs(unit)
	proj := &c.projects[ws.project]
	dept := &c.depts[ws.dept]
	cands := c.candBuf[:0]
	for pi, pool := range proj.pools {
		if !ws.preemptible && (proj.shares[pool].nonPreemptibleExceeded(gpus) ||
			(!dept.unbounded && dept.shares[pool].nonPreemptibleExceeded(gpus))) {
			continue // evicting preemptible work frees no non-preemptible quota
		}
		first := len(cands)
		freed := c.pools[pool].freeGPUs
		cands, freed = c.preemptionCandidates(wi, int32(pi), pool, cands, freed)
		if freed < gpus {
			cands = cands[:first] // the unit never fits in this pool: its work is not taken
		}
	}
	c.candBuf = cands
	if len(cands) == 0 {
		return false
	}
	slices.SortFunc(cands, c.preemptionOrder(proj))
	return c.evictUntilFits(wi, unit, inOrder(cands), nil)
}

// inOrder gives cands one at a time, as evictUntilFits asks for them, then no victim.
func inOrder(cands []candidate) func() candidate {
	i := 0
	return func() candidate {
		if i == len(cands) {
			return candidate{wl: -1}
		}
		i++
		return cands[i-1]
	}
}

// preemptionCandidates appends to cands the running work of workload wi's project in the pool
// (its poolRank-th) that S16 lets wi evict, and adds its GPUs there to freed.
func (c *cycle) preemptionCandidates(wi, poolRank, pool int32, cands []candidate, freed int64) ([]candidate, int64) {
	ws := &c.wls[wi]
	for _, v := range c.projects[ws.project].ranked[pool] {
		vs := &c.wls[v]
		if v == wi || vs.evicted || !vs.preemptible || vs.terminating || vs.prio >= ws.prio || c.placedNow(vs) ||
			c.startedWhileWaiting(vs, ws) || c.minRuntimeLeft(vs) {
			continue
		}
		cands = append(cands, candidate{wl: v, pool: pool, poolRank: poolRank, rule: RulePreemption})
		freed += c.gpusIn(v, pool)
	}
	return cands, freed
}

// preemptionOrder is S16's order of a project's victims: lowest priority first, then the
// project's preemption order.
func (c *cycle) preemptionOrder(proj *projectState) func(a, b candidate) int {
	newest := proj.policy.PreemptionOrder == NewestFirst
	return func(a, b candidate) int {
		wa, wb := &c.wls[a.wl], &c.wls[b.wl]
		if wa.prio != wb.prio {
			return cmp.Compare(wa.prio, wb.prio)
		}
		if wa.start != wb.start {
			if newest {
				return cmp.Compare(wb.start, wa.start)
			}
			return cmp.Compare(wa.start, wb.start)
		}
		if d := cmp.Compare(wa.w.UID, wb.w.UID); d != 0 {
			return d
		}
		if d := -c.compareUIDs(a.wl, b.wl); d != 0 {
			return d // replicas beyond a minimum: the last first, as reclaim takes them (S26)
		}
		return cmp.Compare(a.poolRank, b.poolRank) // one workload with pods in two pools
	}
}

// candidate is a possible victim, the pool whose room its eviction adds to, that pool's place
// in the preemptor's project's order, and the rule it would be evicted under.
type candidate struct {
	wl, pool, poolRank int32
	rule               Rule
}

// evictUntilFits evicts victims in the order next gives them until the unit fits in the
// pool the last one frees room in (the shortest such prefix), then prunes and commits; if the
// unit never fits, nothing is evicted (S19). A victim given back in pruning must leave keep
// true (nil: no such condition).
func (c *cycle) evictUntilFits(wi int32, unit []int32, next func() candidate, keep func() bool) bool {
	mark := c.st.mark()
	victims, rules := c.victimBuf[:0], c.victimRules[:0]
	for {
		v := next()
		if v.wl < 0 {
			break
		}
		if !c.wls[v.wl].evicted { // one workload with pods in two pools comes twice
			c.st.evict(v.wl, wi, v.rule)
			victims, rules = append(victims, v.wl), append(rules, v.rule)
			c.victimBuf, c.victimRules = victims, rules
		}
		if c.fits(wi, unit, v.pool) {
			c.evictMinimal(wi, unit, v.pool, victims, rules, mark, keep)
			return true
		}
	}
	c.st.rollback(mark)
	return false
}

// evictMinimal prunes a victim set after which the unit fits: victims are given back, the
// highest-ranked first, whenever the unit still fits without them (and keep, if any, still
// holds). Then it places the unit and commits.
func (c *cycle) evictMinimal(wi int32, unit []int32, pool int32, victims []int32, rules []Rule, mark int, keep func() bool) {
	for i := len(victims) - 1; i >= 0; i-- {
		c.st.restore(victims[i])
		if !c.fits(wi, unit, pool) || (keep != nil && !keep()) {
			c.st.evict(victims[i], wi, rules[i])
		}
	}
	var f failure
	if !c.placeIn(wi, unit, pool, &f) {
		panic("scheduler: a unit that fitted after eviction no longer fits")
	}
	c.holdForPreemptor(unit, victims)
	c.commit(wi, mark)
}

// holdForPreemptor keeps what the victims free beyond the preemptor's needs from other
// workloads in this cycle: the victims' pods still hold it until they terminate, so binding
// anything there now would double-book it (S19, S22). Only the preemptor, which waits for
// the evictions, is placed on freed capacity.
func (c *cycle) holdForPreemptor(unit, victims []int32) {
	type delta struct {
		node int32
		res  Resources
	}
	var buf [8]delta
	deltas := buf[:0]
	addTo := func(node int32, r Resources, plus bool) {
		i := slices.IndexFunc(deltas, func(d delta) bool { return d.node == node })
		if i < 0 {
			deltas = append(deltas, delta{node: node})
			i = len(deltas) - 1
		}
		if plus {
			deltas[i].res = deltas[i].res.Add(r)
		} else {
			deltas[i].res = deltas[i].res.sub(r)
		}
	}
	for _, v := range victims {
		ws := &c.wls[v]
		if !ws.evicted {
			continue
		}
		for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
			if ps := &c.pods[k]; ps.bound && !ps.terminating {
				addTo(ps.node, ps.req, true)
			}
		}
	}
	for _, k := range unit {
		addTo(c.pods[k].node, c.pods[k].req, false)
	}
	for _, d := range deltas {
		excess := Resources{max(d.res.MilliCPU, 0), max(d.res.Memory, 0), max(d.res.GPUs, 0), max(d.res.Pods, 0)}
		if excess != (Resources{}) {
			c.adjustNode(d.node, excess, false)
		}
	}
}
