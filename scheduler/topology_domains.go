package scheduler

import (
	"slices"
	"strings"
)

// The domains of S29 during a cycle: which levels a request is read on, and each pool's domains
// of a level with their free GPUs, made on first use.

// domainSet is the domains of one level of a pool, built on first use in a cycle. Its free
// GPUs follow every change of a node's (adjustNode), so a search reads them without adding up
// nodes, and a rolled-back attempt leaves them as they were.
type domainSet struct {
	pool    int32
	levels  []string // the label keys, widest first, down to the level
	domains []domain
	of      []int32 // by node position in the pool: its domain (usable or not), -1 when none
	free    []int64 // by domain: free GPUs of its usable nodes
	// nodeLevel: every domain is one node (the hostname level)
	nodeLevel bool
	// wider[j] are the domain sets of levels[:j+1] for each wider level j, and up[j][d] the
	// domain of wider[j] that holds domain d: best fit breaks ties by them
	wider []*domainSet
	up    [][]int32
}

type domain struct {
	path     string  // the levels' values, widest first, "/"-joined
	first    int32   // its first node by name, usable or not
	nodes    []int32 // its usable nodes, by name: where pods may go
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
// topology they are from: the topology it names, else the pool's, else the first by name that
// lists the level; a level no topology lists stands alone.
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
	var first *Topology // by name, so that the order of the snapshot's list does not matter
	for i := range c.snap.Topologies {
		if t := &c.snap.Topologies[i]; try(t) != nil && (first == nil || t.Name < first.Name) {
			first = t
		}
	}
	if first != nil {
		return try(first), first.Name
	}
	return []string{req.Level}, ""
}

// searchChain is the levels a request's search tries, from the last to chain[widest]: a
// preferred request's level and every wider one; a required one's level alone, or its preferred
// level and the wider ones up to the required (when the preferred is narrower in the same
// topology). name is the topology read.
func (c *cycle) searchChain(r *TopologyRequest, pool int32) (chain []string, widest int, name string) {
	chain, name = c.chainOf(r, pool)
	if !r.Required {
		return chain, 0, name
	}
	if r.Preferred != "" {
		inner, innerName := c.chainOf(&TopologyRequest{Topology: r.Topology, Level: r.Preferred}, pool)
		if innerName == name && len(inner) > len(chain) && inner[len(chain)-1] == r.Level {
			return inner, len(chain) - 1, name
		}
	}
	return chain, len(chain) - 1, name
}

// domainsOf is the pool's domains of the last of levels.
func (c *cycle) domainsOf(pool int32, levels []string) *domainSet {
	key := domainKey{pool, strings.Join(levels, "\x00")}
	if ds, ok := c.domainSets[key]; ok {
		return ds
	}
	p := &c.pools[pool]
	ds := &domainSet{pool: pool, levels: levels, of: make([]int32, len(p.nodes))}
	byPath := map[string]int32{}
	var path []byte // reused: a node's path is looked up without making a string of it
	for pos, n := range p.nodes {
		ds.of[pos] = -1
		ns := &c.nodes[n]
		path = path[:0]
		whole := true
		for i, l := range levels {
			v, ok := ns.node.Labels[l]
			if !ok {
				whole = false
				break
			}
			if i > 0 {
				path = append(path, '/')
			}
			path = append(path, v...)
		}
		if !whole {
			continue
		}
		d, ok := byPath[string(path)]
		if !ok {
			d = int32(len(ds.domains))
			byPath[string(path)] = d
			ds.domains = append(ds.domains, domain{path: string(path), first: n})
		}
		// an unusable node is still in its domain (where work on it runs), but takes nothing
		ds.of[pos] = d
		if ns.usable {
			ds.domains[d].nodes = append(ds.domains[d].nodes, n)
			ds.domains[d].capacity += ns.node.Allocatable.GPUs
		}
	}
	ds.free = make([]int64, len(ds.domains))
	ds.nodeLevel = true
	for d := range ds.domains {
		ds.nodeLevel = ds.nodeLevel && len(ds.domains[d].nodes) == 1
	}
	for d := range ds.domains {
		for _, n := range ds.domains[d].nodes {
			ds.free[d] += max(c.nodes[n].free.GPUs, 0)
		}
	}
	if c.domainSets == nil {
		c.domainSets = map[domainKey]*domainSet{}
	}
	c.domainSets[key] = ds
	c.domainList = append(c.domainList, ds)
	for j := len(levels) - 2; j >= 0; j-- { // narrowest wider level first
		w := c.domainsOf(pool, levels[:j+1])
		up := make([]int32, len(ds.domains))
		for d := range ds.domains {
			up[d] = w.of[c.nodes[ds.domains[d].first].pos]
		}
		ds.wider, ds.up = append(ds.wider, w), append(ds.up, up)
	}
	return ds
}

// domainsGained follows a change of a usable node's free GPUs in every domain set of its pool.
func (c *cycle) domainsGained(ns *nodeState, delta int64) {
	for _, ds := range c.domainList {
		if ds.pool == ns.pool {
			if d := ds.of[ns.pos]; d >= 0 {
				ds.free[d] += delta
			}
		}
	}
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
