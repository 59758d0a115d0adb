package scheduler

// S11 per node pool. Siblings compete in arenas: the projects of one department whose first
// node pool (S21) is the same. Each pool orders its arenas by their departments' shares of
// that pool, and each arena its projects by their shares of that pool, so that what decides
// the order in a pool is use of that pool alone: a project's deserved GPUs elsewhere neither
// hurry nor delay it here. Pools take turns. A project that may use several pools competes
// in its first; its workloads still go to later pools when the first has no room.

type arena struct {
	dept, pool int32
	projects   indexedHeap
	heapPos    int32
}

// home is the pool a project competes in.
func (c *cycle) home(j int32) int32 { return c.arenas[c.projects[j].arena].pool }

// keyIn is a group's S11 key in one pool (the zero key when there are no pools at all).
func keyIn(g *group, pool int32) fairKey {
	if int(pool) >= len(g.shares) {
		return fairKey{}
	}
	sh := &g.shares[pool]
	if g.timeFair != nil && g.timeFair[pool].on {
		return g.timeFair[pool].key(sh.alloc, sh.quota.Deserved)
	}
	return makeFairKey(sh.alloc, sh.quota.Deserved, sh.quota.OverQuotaWeight)
}

func (c *cycle) buildArenas() {
	// the method values are made once: made in every comparison, they would be allocated there
	c.projectQP, c.arenaQP = c.projectQueuePriority, c.arenaQueuePriority
	nPools := max(len(c.pools), 1)
	c.poolHeaps = make([]indexedHeap, nPools)
	c.arenaOf = make([]int32, len(c.depts)*nPools)
	for i := range c.arenaOf {
		c.arenaOf[i] = -1
	}
	projPos := func(j int32) *int32 { return &c.projects[j].heapPos }
	projLess := func(a, b int32) bool {
		pool := c.home(a)
		ga, gb := &c.projects[a].group, &c.projects[b].group
		if d := compareGroups(keyIn(ga, pool), keyIn(gb, pool), ga, gb, c.projectQP, a, b); d != 0 {
			return d < 0
		}
		return a < b
	}
	for j := range c.projects {
		p := &c.projects[j]
		pool := int32(0)
		if len(p.pools) > 0 {
			pool = p.pools[0]
		}
		slot := int(p.dept)*nPools + int(pool)
		if c.arenaOf[slot] < 0 {
			c.arenaOf[slot] = int32(len(c.arenas))
			c.arenas = append(c.arenas, arena{dept: p.dept, pool: pool, heapPos: -1,
				projects: indexedHeap{pos: projPos, less: projLess}})
		}
		p.arena = c.arenaOf[slot]
	}
	c.weighPastUse() // S28, in the pools that have it on
	for pool := range c.poolHeaps {
		c.poolHeaps[pool] = indexedHeap{
			pos: func(a int32) *int32 { return &c.arenas[a].heapPos },
			less: func(a, b int32) bool {
				// ties go to the department first by name, as they did before arenas
				if d := c.compareArenas(a, b); d != 0 {
					return d < 0
				}
				return c.arenas[a].dept < c.arenas[b].dept
			},
		}
	}
	for j := range c.projects {
		if c.advance(int32(j)) {
			c.arenas[c.projects[j].arena].projects.push(int32(j))
		}
	}
	for a := range c.arenas {
		if ar := &c.arenas[a]; ar.projects.len() > 0 {
			c.poolHeaps[ar.pool].push(int32(a))
		}
	}
}

func (c *cycle) liveArenas() int {
	n := 0
	for pool := range c.poolHeaps {
		n += c.poolHeaps[pool].len()
	}
	return n
}

// admitNext tries the head of the first project of the pool's first arena (S11), then puts
// what changed back in order.
func (c *cycle) admitNext(h *indexedHeap) {
	a := h.top()
	ar := &c.arenas[a]
	j := ar.projects.top()
	p := &c.projects[j]
	wi := p.queue[p.next]
	p.next++
	firstEviction := len(c.plan.Evictions)
	c.attempt(wi, true)
	if c.wls[wi].outcome == waiting && p.policy.Queueing == Strict && !c.isExtra(&c.wls[wi]) {
		c.blockBehind(j, wi)
	}
	if c.advance(j) {
		ar.projects.fix(j)
	} else {
		ar.projects.remove(j)
	}
	if ar.projects.len() == 0 {
		h.remove(a)
	}
	// the department's use changed: refreshDept puts its arenas back in order in every pool,
	// this one (a, when it has projects left) included; and victims' projects now use less,
	// which moves them in their pools' order
	c.refreshDept(p.dept)
	for _, e := range c.evictedOrder[firstEviction:] {
		c.refresh(c.wls[e].project)
	}
}

// refresh puts a project whose use changed back in order, with its department's arenas.
func (c *cycle) refresh(j int32) {
	if j < 0 {
		return
	}
	p := &c.projects[j]
	if ar := &c.arenas[p.arena]; p.heapPos >= 0 {
		ar.projects.fix(j)
	}
	c.refreshDept(p.dept)
}

func (c *cycle) refreshDept(d int32) {
	nPools := len(c.poolHeaps)
	for pool := range nPools {
		if a := c.arenaOf[int(d)*nPools+pool]; a >= 0 && c.arenas[a].heapPos >= 0 {
			c.poolHeaps[pool].fix(a)
		}
	}
}

// compareArenas is S11 with S25 between two arenas of one pool: their departments' shares of
// the pool and queue priorities; 0 when they tie.
func (c *cycle) compareArenas(a, b int32) int {
	da, db := &c.depts[c.arenas[a].dept].group, &c.depts[c.arenas[b].dept].group
	pool := c.arenas[a].pool
	return compareGroups(keyIn(da, pool), keyIn(db, pool), da, db, c.arenaQP, a, b)
}
