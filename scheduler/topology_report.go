package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// What S29 tells: where each workload that asks landed (Plan.Topology), the warnings about
// requests that cannot be read, and the sentence of TopologyUnsatisfiable.

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
			chain, _, name := c.searchChain(r, pool)
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
		if r.Required && r.Preferred != "" && !c.nested(r) {
			c.plan.Warnings = append(c.plan.Warnings, Warning{Workload: w.UID, Code: InvalidTopology,
				Message: "The preferred level " + r.Preferred + " is not narrower than the required " + r.Level +
					" in one topology (" + r.Source + "); only the required level is read."})
		}
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
		return needs + ", but no node of pool " + pool + " carries the label " + m.level + ". " +
			"Ask an administrator to label the nodes, or ask for another level."
	case m.largest < m.need:
		return needs + "; no " + name + " of pool " + pool + " ever has that many (the largest has " +
			gpus(m.largest) + "). Ask for a wider level, or make it preferred."
	}
	return needs + "; the emptiest " + name + " has " + strconv.FormatInt(m.free, 10) + " free (" + m.emptiest +
		"). It starts when one " + name + " of pool " + pool + " has room."
}

// domainNote names, for a workload waiting for its victims, the domain set aside for it
// (" in rack b1/r3"), or "" when it asks for no topology.
func (c *cycle) domainNote(ws *wlState) string {
	i, found := slices.BinarySearchFunc(c.plan.Topology, ws.w.UID, func(tp TopologyPlacement, uid string) int {
		return cmp.Compare(tp.Workload, uid)
	})
	if !found || c.plan.Topology[i].Domain == "" || (i+1 < len(c.plan.Topology) && c.plan.Topology[i+1].Workload == ws.w.UID) {
		return "" // none, or several pod sets: the plan's list says where each goes
	}
	tp := &c.plan.Topology[i]
	return " in " + levelName(tp.Level) + " " + tp.Domain
}

// nested reports whether a request's preferred level lies below its required one in one
// topology, in some pool (searchChain then tries it first).
func (c *cycle) nested(r *TopologyRequest) bool {
	for pool := range c.pools {
		chain, widest, _ := c.searchChain(r, int32(pool))
		if len(chain)-1 > widest {
			return true
		}
	}
	return false
}
