package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// This file is S29: a gang (or a pod set) that asks for a topology level goes into one domain
// of it. The search runs only for workloads that ask; the others are placed as S21 says.
//
// A domain of level i of a topology is the set of a pool's usable nodes that share the values
// of levels 0..i (a rack is named by its block and its own value, as Kueue and KAI name them:
// two racks called r1 in different blocks are two domains). A node that lacks one of these
// labels is in no domain of the level.
//
// Required: the domains of the level whose free GPUs cover the unit are tried best fit first
// (the fewest free GPUs; among equals, the one whose wider domains have the fewest free, then
// by name), so that the emptiest domains stay whole for the next large job; the first in
// which every pod finds a node (binpack or spread inside it, as the pool says) is taken. None:
// TopologyUnsatisfiable. Preferred: the same at the requested level, then at each wider one,
// then on any nodes of the pool. Pods of the workload (or pod set) already placed fix the domain.
//
// Preemption and reclaim need nothing of their own: they evict until the unit fits
// (fits is this search) and then give back every victim it still fits without, so every
// victim that stays frees GPUs on a node of the domain the unit is then placed in, and nothing
// is evicted for a unit that fits in no domain (S19).

// TopologyUnsatisfiable: the pool has the GPUs, but not inside one domain of the level asked for.
const TopologyUnsatisfiable Reason = "TopologyUnsatisfiable"

// InvalidTopology: a topology request could not be read as written; it is ignored or read
// as far as it goes, as its message says.
const InvalidTopology WarningCode = "InvalidTopology"

// TopologyPlacement is where a workload (or one of its pod sets) that asks for a topology is
// placed once the plan is carried out: bound, resumed, or set aside behind evictions.
type TopologyPlacement struct {
	Workload string // UID
	PodSet   string // empty for the whole workload
	Topology string // the topology whose levels were read; empty when none lists the level
	Required bool
	// Level is the narrowest level, of those the request allows, whose one domain holds all
	// its placed pods; Domain names that domain by its levels' values, widest first, joined
	// by "/" ("block-1/rack-3"). Both are empty when a preferred request's pods spread wider
	// than its widest level.
	Level, Domain string
}

// topoMiss is what a failed required placement says: the level, and the emptiest domain.
type topoMiss struct {
	level    string // label key
	emptiest string // its path; empty when no node carries the level
	free     int64  // free GPUs there
	largest  int64  // allocatable GPUs of the largest domain
	need     int64
}

// domainSet is the domains of one level of a pool, built on first use in a cycle.
type domainSet struct {
	levels  []string // the label keys, widest first, down to the level
	domains []domain
	of      []int32 // by node position in the pool: its domain, -1 when none
}

type domain struct {
	path     string  // the levels' values, widest first, "/"-joined
	nodes    []int32 // node indices, by name
	capacity int64   // allocatable GPUs of its usable nodes
}

type domainKey struct {
	pool   int32
	levels string
}

// topologyOf is the topology by name, nil when none has it.
func (c *cycle) topologyOf(name string) *Topology {
	for i := range c.snap.Topologies {
		if c.snap.Topologies[i].Name == name {
			return &c.snap.Topologies[i]
		}
	}
	return nil
}

// chainOf is the levels a request is read on, widest first, ending at its level, and the
// topology they are from: the topology it names, else the pool's, else the first that lists
// the level; a level no topology lists stands alone.
func (c *cycle) chainOf(req *TopologyRequest, pool int32) ([]string, string) {
	try := func(t *Topology) []string {
		if t == nil {
			return nil
		}
		if i := slices.Index(t.Levels, req.Level); i >= 0 {
			return t.Levels[:i+1]
		}
		return nil
	}
	if req.Topology != "" {
		if t := c.topologyOf(req.Topology); try(t) != nil {
			return try(t), t.Name
		}
	}
	if t := c.topologyOf(c.pools[pool].pool.Topology); try(t) != nil {
		return try(t), t.Name
	}
	for i := range c.snap.Topologies {
		if l := try(&c.snap.Topologies[i]); l != nil {
			return l, c.snap.Topologies[i].Name
		}
	}
	return []string{req.Level}, ""
}

// domainsOf is the pool's domains of the last of levels.
func (c *cycle) domainsOf(pool int32, levels []string) *domainSet {
	key := domainKey{pool, strings.Join(levels, "\x00")}
	if ds, ok := c.domainSets[key]; ok {
		return ds
	}
	p := &c.pools[pool]
	ds := &domainSet{levels: levels, of: make([]int32, len(p.nodes))}
	byPath := map[string]int32{}
	var b strings.Builder
	for pos, n := range p.nodes {
		ds.of[pos] = -1
		ns := &c.nodes[n]
		if !ns.usable {
			continue
		}
		b.Reset()
		whole := true
		for i, l := range levels {
			v, ok := ns.node.Labels[l]
			if !ok {
				whole = false
				break
			}
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(v)
		}
		if !whole {
			continue
		}
		d, ok := byPath[b.String()]
		if !ok {
			d = int32(len(ds.domains))
			byPath[b.String()] = d
			ds.domains = append(ds.domains, domain{path: b.String()})
		}
		ds.of[pos] = d
		ds.domains[d].nodes = append(ds.domains[d].nodes, n)
		ds.domains[d].capacity += ns.node.Allocatable.GPUs
	}
	if c.domainSets == nil {
		c.domainSets = map[domainKey]*domainSet{}
	}
	c.domainSets[key] = ds
	return ds
}

// requestOf is the request that applies to a pod of the workload: the workload's, else its pod
// set's; nil when none (or one without a level, which asks for nothing).
func requestOf(w *Workload, p *Pod) *TopologyRequest {
	if w.Topology != nil {
		if w.Topology.Level == "" {
			return nil
		}
		return w.Topology
	}
	for i := range w.PodSetTopologies {
		if s := &w.PodSetTopologies[i]; s.PodSet == p.PodSet && s.Request.Level != "" {
			return &s.Request
		}
	}
	return nil
}

// asksTopology reports whether any of the workload's pods asks for a topology.
func asksTopology(w *Workload) bool {
	return (w.Topology != nil && w.Topology.Level != "") || len(w.PodSetTopologies) > 0
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

// placeRequest places pods (all of one request) in one domain, or for a preferred request
// anywhere in the pool at last. When it cannot, a required request says what its level's
// search found; a preferred one says nothing (the pool has no room for them at all).
func (c *cycle) placeRequest(ws *wlState, pods []int32, pool int32, r *TopologyRequest) (bool, *topoMiss) {
	chain, _ := c.chainOf(r, pool)
	anchor := c.anchorOf(ws, pods[0], r)
	if r.Required {
		miss := c.placeAtLevel(pods, pool, chain, anchor)
		return miss == nil, miss
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if c.placeAtLevel(pods, pool, chain[:i+1], anchor) == nil {
			return true, nil
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

// allPods is the range of the workload's pods in c.pods, over every part of a semi-preemptible
// one (S26): its parts follow each other, the minimum first.
func (c *cycle) allPods(wi int32) (from, to int32) {
	first := c.minimumOf(wi)
	last := first
	for last+1 < int32(len(c.wls)) && c.wls[last+1].w == c.wls[first].w {
		last++
	}
	return c.wls[first].firstPod, c.wls[last].firstPod + c.wls[last].pods
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
// fit of those whose free GPUs cover them. nil when placed.
func (c *cycle) placeAtLevel(pods []int32, pool int32, levels []string, anchor int32) *topoMiss {
	ds := c.domainsOf(pool, levels)
	var need int64
	for _, k := range pods {
		need += c.pods[k].req.GPUs
	}
	free := c.domainFree(pool, ds)
	miss := &topoMiss{level: levels[len(levels)-1], need: need, free: -1}
	for d := range ds.domains {
		if free[d] > miss.free {
			miss.emptiest, miss.free = ds.domains[d].path, free[d]
		}
		miss.largest = max(miss.largest, ds.domains[d].capacity)
	}
	miss.free = max(miss.free, 0)
	var cands []int32
	if anchor >= 0 {
		// placed before in another pool: nothing of this one is its domain
		if an := &c.nodes[anchor]; an.pool == pool && ds.of[an.pos] >= 0 {
			cands = append(cands, ds.of[an.pos])
		}
	} else {
		for d := range ds.domains {
			if free[d] >= need {
				cands = append(cands, int32(d))
			}
		}
		c.bestFitFirst(pool, ds, free, cands)
	}
	spread := c.pools[pool].spread
	for _, d := range cands {
		mark := c.st.mark()
		ok := true
		for _, k := range pods {
			n := c.chooseNodeIn(ds.domains[d].nodes, &c.pods[k], spread)
			if n < 0 {
				ok = false
				break
			}
			c.st.place(k, n)
		}
		if ok {
			return nil
		}
		c.st.rollback(mark)
	}
	return miss
}

// domainFree is each domain's free GPUs now.
func (c *cycle) domainFree(pool int32, ds *domainSet) []int64 {
	free := make([]int64, len(ds.domains))
	for d := range ds.domains {
		for _, n := range ds.domains[d].nodes {
			free[d] += max(c.nodes[n].free.GPUs, 0)
		}
	}
	return free
}

// bestFitFirst orders candidate domains: the fewest free GPUs first; among equals, the one
// whose wider domains (its block, ...) have the fewest free, narrowest first; then by name.
func (c *cycle) bestFitFirst(pool int32, ds *domainSet, free []int64, cands []int32) {
	if len(cands) < 2 {
		return
	}
	// the free GPUs of each wider domain, by its path, for the tie-break
	wider := map[string]int64{}
	for d := range ds.domains {
		p := ds.domains[d].path
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			wider[p[:i]] += free[d]
		}
	}
	slices.SortFunc(cands, func(a, b int32) int {
		if x := cmp.Compare(free[a], free[b]); x != 0 {
			return x
		}
		pa, pb := ds.domains[a].path, ds.domains[b].path
		ia, ib := strings.LastIndexByte(pa, '/'), strings.LastIndexByte(pb, '/')
		for ia > 0 && ib > 0 {
			if x := cmp.Compare(wider[pa[:ia]], wider[pb[:ib]]); x != 0 {
				return x
			}
			ia, ib = strings.LastIndexByte(pa[:ia], '/'), strings.LastIndexByte(pb[:ib], '/')
		}
		return strings.Compare(pa, pb)
	})
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

// topologyOut lists, for the plan, where each workload that asks for a topology is placed.
func (c *cycle) topologyOut() {
	for _, wi := range c.topoWls {
		ws := &c.wls[wi]
		if c.isExtra(ws) {
			continue // told with its minimum, the first part
		}
		var reqs []*TopologyRequest
		var nodes [][]int32
		from, to := c.allPods(wi)
		for k := from; k < to; k++ {
			ps := &c.pods[k]
			r := requestOf(ws.w, ps.pod)
			if r == nil || ps.node < 0 || ps.terminating || c.wls[ps.wl].evicted {
				continue
			}
			i := slices.Index(reqs, r)
			if i < 0 {
				reqs, nodes = append(reqs, r), append(nodes, nil)
				i = len(reqs) - 1
			}
			nodes[i] = append(nodes[i], ps.node)
		}
		for i, r := range reqs {
			pool := c.nodes[nodes[i][0]].pool
			if pool < 0 {
				continue
			}
			chain, name := c.chainOf(r, pool)
			tp := TopologyPlacement{Workload: ws.w.UID, Topology: name, Required: r.Required}
			if ws.w.Topology == nil {
				for k := from; k < to; k++ {
					if requestOf(ws.w, c.pods[k].pod) == r {
						tp.PodSet = c.pods[k].pod.PodSet
						break
					}
				}
			}
			for l := len(chain) - 1; l >= 0; l-- {
				if path, ok := c.sharedDomain(pool, chain[:l+1], nodes[i]); ok {
					tp.Level, tp.Domain = chain[l], path
					break
				}
			}
			c.plan.Topology = append(c.plan.Topology, tp)
		}
	}
	slices.SortStableFunc(c.plan.Topology, func(a, b TopologyPlacement) int {
		if x := cmp.Compare(a.Workload, b.Workload); x != 0 {
			return x
		}
		return cmp.Compare(a.PodSet, b.PodSet)
	})
}

// sharedDomain is the path of the one domain of the last of levels that holds all the nodes.
func (c *cycle) sharedDomain(pool int32, levels []string, nodes []int32) (string, bool) {
	ds := c.domainsOf(pool, levels)
	d := int32(-1)
	for _, n := range nodes {
		ns := &c.nodes[n]
		if ns.pool != pool {
			return "", false
		}
		x := ds.of[ns.pos]
		if x < 0 || (d >= 0 && x != d) {
			return "", false
		}
		d = x
	}
	if d < 0 {
		return "", false
	}
	return ds.domains[d].path, true
}

// topologyWarnings are a workload's InvalidTopology warnings: values its reader could not
// read, and a topology name no topology has.
func (c *cycle) topologyWarnings(w *Workload) {
	for _, p := range w.TopologyProblems {
		c.plan.Warnings = append(c.plan.Warnings, Warning{Workload: w.UID, Code: InvalidTopology, Message: p})
	}
	check := func(r *TopologyRequest) {
		if r.Topology == "" {
			return
		}
		t := c.topologyOf(r.Topology)
		switch {
		case t == nil:
			c.plan.Warnings = append(c.plan.Warnings, Warning{Workload: w.UID, Code: InvalidTopology,
				Message: "Topology " + strconv.Quote(r.Topology) + " (" + r.Source + ") is not one of the cluster's topologies; " +
					"the level " + r.Level + " is read as if no topology were named."})
		case !slices.Contains(t.Levels, r.Level):
			c.plan.Warnings = append(c.plan.Warnings, Warning{Workload: w.UID, Code: InvalidTopology,
				Message: "Topology " + strconv.Quote(r.Topology) + " has no level " + r.Level + " (" + r.Source + "); " +
					"the level is read as if no topology were named."})
		}
	}
	if w.Topology != nil {
		check(w.Topology)
	}
	for i := range w.PodSetTopologies {
		check(&w.PodSetTopologies[i].Request)
	}
}

// levelName is how a sentence names a level: the last part of its label key, without a
// "topology-" prefix ("rack" for cloud.provider.com/topology-rack; "node" for the hostname).
func levelName(key string) string {
	if key == "kubernetes.io/hostname" {
		return "node"
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	return strings.TrimPrefix(key, "topology-")
}

// topologySentence is the message of TopologyUnsatisfiable: what it needs in one domain of
// which level, and the emptiest domain (S23, S29).
func topologySentence(m *topoMiss, pool string) string {
	name := levelName(m.level)
	needs := "Needs " + gpus(m.need) + " in one " + name
	if name != m.level {
		needs += " (" + m.level + ")"
	}
	switch {
	case m.emptiest == "":
		return needs + ", but no usable node of pool " + pool + " carries that label; no topology of the pool may define it. " +
			"Ask an administrator to label the nodes, or ask for another level."
	case m.largest < m.need:
		return needs + "; no " + name + " of pool " + pool + " ever has that many (the largest has " +
			gpus(m.largest) + "). Ask for a wider level, or make it preferred."
	}
	return needs + "; the emptiest " + name + " has " + strconv.FormatInt(m.free, 10) + " free (" + m.emptiest +
		"). It starts when one " + name + " of pool " + pool + " has room."
}
