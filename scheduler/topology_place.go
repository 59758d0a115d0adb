package scheduler

import "slices"

// This file is S29's search: a gang (or a pod set) that asks for a topology level goes into one
// domain of it (topology_domains.go). It runs only for workloads that ask; the others are
// placed as S21 says.
//
// Required: of the level's domains whose free GPUs cover the unit, the best fit is tried first
// (the fewest free GPUs; among equals, the one whose wider domains have the fewest free, then the
// one whose first node comes first by name), so that the emptiest domains stay whole for the
// next large job; inside it the pods go as the pool places (binpack or spread). When its nodes
// cannot take them, the others follow in that order. None: TopologyUnsatisfiable. Preferred:
// the same at the requested level, then at each wider one, then anywhere in the pool. Pods of
// the workload (or pod set) placed before fix the domain; a lone pod at the node level goes
// where S21 puts it, each node being a domain of its own.
//
// Preemption and reclaim need nothing of their own: they evict until the unit fits (fits is
// this search) and then give back every victim it still fits without, so every victim that
// stays frees GPUs in the domain the unit then goes to, or quota its project needs (S13), and
// nothing is evicted for a unit that fits in no domain (S19).

// topoMiss is what a failed required placement says: the level, and the emptiest domain.
type topoMiss struct {
	level    string // label key
	emptiest string // its path; empty when no node carries the level
	free     int64  // free GPUs there
	largest  int64  // allocatable GPUs of the largest domain
	need     int64
}

// placeTopology places the unit in the pool with its topology requests, leaving the
// placements in the statement, or notes why not. The unit's pods are in placing order.
func (c *cycle) placeTopology(wi int32, unit []int32, pool int32, gpus int64, f *failure) bool {
	ws := &c.wls[wi]
	mark := c.st.mark()
	// the pods of each request together, in the order their first pod comes in the unit;
	// pods that ask for nothing go last, as S21 places them
	var groups [][]int32
	var reqs []*TopologyRequest
	var rest []int32
	for _, k := range unit {
		r := requestOf(ws.w, c.pods[k].pod)
		if r == nil {
			rest = append(rest, k)
			continue
		}
		i := slices.Index(reqs, r)
		if i < 0 {
			reqs, groups = append(reqs, r), append(groups, nil)
			i = len(reqs) - 1
		}
		groups[i] = append(groups[i], k)
	}
	for i, r := range reqs {
		if ok, miss := c.placeRequest(ws, groups[i], pool, r); !ok {
			c.st.rollback(mark)
			if miss == nil { // preferred: not even spread over the pool
				f.note(failure{reason: InsufficientCapacity, pool: pool, amount: gpus, bound: c.pools[pool].freeGPUs})
			} else {
				f.note(failure{reason: TopologyUnsatisfiable, pool: pool, amount: gpus, bound: miss.free, topo: miss})
			}
			return false
		}
	}
	for _, k := range rest {
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

// neverFits is, when a required request among the unit's could not be met in the pool even
// with every pod of the pool gone (no domain of its level has that many GPUs), what its level's
// search says; nil otherwise. Such a unit evicts nothing and claims nothing (S19).
func (c *cycle) neverFits(wi int32, unit []int32, pool int32) *topoMiss {
	ws := &c.wls[wi]
	var reqs []*TopologyRequest
	var needs []int64
	var firsts []int32 // each request's first pod in the unit
	for _, k := range unit {
		r := requestOf(ws.w, c.pods[k].pod)
		if r == nil || !r.Required {
			continue
		}
		i := slices.Index(reqs, r)
		if i < 0 {
			reqs, needs, firsts = append(reqs, r), append(needs, 0), append(firsts, k)
			i = len(reqs) - 1
		}
		needs[i] += c.pods[k].req.GPUs
	}
	for i, r := range reqs {
		chain, _ := c.chainOf(r, pool)
		ds := c.domainsOf(pool, chain)
		largest := int64(-1)
		if a := c.anchorOf(ws, firsts[i], r); a >= 0 {
			if an := &c.nodes[a]; an.pool == pool && ds.of[an.pos] >= 0 {
				largest = ds.domains[ds.of[an.pos]].capacity
			}
		} else {
			for d := range ds.domains {
				largest = max(largest, ds.domains[d].capacity)
			}
		}
		if largest < needs[i] {
			return c.missAt(ds, needs[i])
		}
	}
	return nil
}

// placeRequest places pods (all of one request) in one domain, or for a preferred request
// anywhere in the pool at last. When it cannot, a required request says what its level's
// search found; a preferred one says nothing (the pool has no room for them at all).
func (c *cycle) placeRequest(ws *wlState, pods []int32, pool int32, r *TopologyRequest) (bool, *topoMiss) {
	chain, widest, _ := c.searchChain(r, pool)
	anchor := c.anchorOf(ws, pods[0], r)
	for i := len(chain) - 1; i >= widest; i-- {
		miss := c.placeAtLevel(pods, pool, chain[:i+1], anchor)
		if miss == nil {
			return true, nil
		}
		if r.Required && i == widest {
			return false, miss // what the required level's search says
		}
	}
	// no domain of any level fits: anywhere in the pool, as S21 places
	mark := c.st.mark()
	for _, k := range pods {
		n := c.chooseNode(pool, &c.pods[k])
		if n < 0 {
			c.st.rollback(mark)
			return false, nil
		}
		c.st.place(k, n)
	}
	return true, nil
}

// anchorOf is a node of a pod placed before (bound, or placed earlier in the cycle) under the
// same request as pod k, and of its gang group: the domain is where that one is. -1 if none.
func (c *cycle) anchorOf(ws *wlState, k int32, r *TopologyRequest) int32 {
	group := c.pods[k].pod.GangGroup
	from, to := c.allPods(c.pods[k].wl)
	for j := from; j < to; j++ {
		ps := &c.pods[j]
		if ps.node < 0 || ps.terminating || ps.pod.GangGroup != group || requestOf(ws.w, ps.pod) != r {
			continue
		}
		return ps.node
	}
	return -1
}

// placeAtLevel places the pods in one domain of the last of levels: the anchor's, else the best
// fit of those whose free GPUs cover them, the next best when its nodes cannot take them.
// nil when placed.
func (c *cycle) placeAtLevel(pods []int32, pool int32, levels []string, anchor int32) *topoMiss {
	ds := c.domainsOf(pool, levels)
	var need int64
	for _, k := range pods {
		need += c.pods[k].req.GPUs
	}
	spread := c.pools[pool].spread
	try := func(d int32) bool {
		mark := c.st.mark()
		for _, k := range pods {
			n := c.chooseNodeIn(ds.domains[d].nodes, &c.pods[k], spread)
			if n < 0 {
				c.st.rollback(mark)
				return false
			}
			c.st.place(k, n)
		}
		return true
	}
	switch {
	case anchor >= 0:
		// placed before in another pool: nothing of this one is its domain
		if an := &c.nodes[anchor]; an.pool == pool && ds.of[an.pos] >= 0 && try(ds.of[an.pos]) {
			return nil
		}
	case len(pods) == 1 && ds.nodeLevel:
		// each domain is a node: the node the pool would choose (binpack's fullest that fits
		// is the best fit)
		return c.placeOnePod(pods[0], pool, ds, need, try)
	case len(pods) == 1:
		// one pod is inside one domain wherever it goes: the best fit, else where S21 puts it
		if best := c.bestFit(ds, need); best >= 0 && try(best) {
			return nil
		}
		return c.placeOnePod(pods[0], pool, ds, need, try)
	default:
		// the best fit nearly always takes them: one pass finds it; when its nodes cannot
		// (CPU, memory, pod slots, selectors), the others in best-fit order
		best := c.bestFit(ds, need)
		if best >= 0 && try(best) {
			return nil
		}
		cands := c.triedBuf[:0]
		for d := range int32(len(ds.domains)) {
			if d != best && ds.free[d] >= need {
				cands = append(cands, d)
			}
		}
		slices.SortFunc(cands, func(a, b int32) int {
			switch {
			case a == b:
				return 0
			case ds.fitsBetter(a, b):
				return -1
			}
			return 1 // two domains are never equal: the last key is the domain itself
		})
		c.triedBuf = cands
		for _, d := range cands {
			if try(d) {
				return nil
			}
		}
	}
	return c.missAt(ds, need)
}

// placeOnePod puts a pod where S21 would, when that node is in a domain of the set; else in the
// first domain whose nodes can take it. nil when placed.
func (c *cycle) placeOnePod(k, pool int32, ds *domainSet, need int64, try func(int32) bool) *topoMiss {
	n := c.chooseNode(pool, &c.pods[k])
	switch {
	case n < 0: // no node of the pool can take it now
	case ds.of[c.nodes[n].pos] >= 0:
		c.st.place(k, n)
		return nil
	default: // that node lacks the level's label
		for d := range int32(len(ds.domains)) {
			if ds.free[d] >= need && try(d) {
				return nil
			}
		}
	}
	return c.missAt(ds, need)
}

// missAt is what a failed search of the domain set says: the emptiest domain, the largest.
func (c *cycle) missAt(ds *domainSet, need int64) *topoMiss {
	miss := &topoMiss{level: ds.levels[len(ds.levels)-1], need: need, free: -1}
	for d := range ds.domains {
		if ds.free[d] > miss.free {
			miss.emptiest, miss.free = ds.domains[d].path, ds.free[d]
		}
		miss.largest = max(miss.largest, ds.domains[d].capacity)
	}
	miss.free = max(miss.free, 0)
	return miss
}

// bestFit is, of the domains whose free GPUs cover need, the one with the fewest free; among
// equals, the one whose wider domains (its block, ...) have the fewest, narrowest first; then
// the one whose first node comes first by name. -1 when none.
func (c *cycle) bestFit(ds *domainSet, need int64) int32 {
	best, bestFree := int32(-1), int64(0)
	for i, f := range ds.free { // at thousands of domains this loop is the search: cheap tests first
		if d := int32(i); f >= need && (best < 0 || f < bestFree || (f == bestFree && ds.fitsBetter(d, best))) {
			best, bestFree = d, f
		}
	}
	return best
}

// fitsBetter reports whether domain a is a better fit than b (see bestFit).
func (ds *domainSet) fitsBetter(a, b int32) bool {
	if ds.free[a] != ds.free[b] {
		return ds.free[a] < ds.free[b]
	}
	for j, w := range ds.wider {
		if fa, fb := w.free[ds.up[j][a]], w.free[ds.up[j][b]]; fa != fb {
			return fa < fb
		}
	}
	return a < b // domains are numbered in the order of their first node by name
}

// chooseNodeIn picks, among nodes, the one for a pod: the fullest that fits (binpack) or the
// emptiest (spread), by free GPUs; among equals the first by name. -1 when none fits.
func (c *cycle) chooseNodeIn(nodes []int32, ps *podState, spread bool) int32 {
	best := int32(-1)
	var bestFree int64
	for _, n := range nodes {
		ns := &c.nodes[n]
		if !ns.usable || !ns.free.covers(ps.req) || !c.eligible(n, ps) {
			continue
		}
		g := ns.free.GPUs
		if best < 0 || (!spread && g < bestFree) || (spread && g > bestFree) {
			best, bestFree = n, g
		}
	}
	return best
}
