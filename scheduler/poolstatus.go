package scheduler

import (
	"cmp"
	"slices"
)

// reportNodePools counts each pool's nodes and the GPUs held on them once the plan is carried
// out (NodePoolStatus), by the same node→pool rule the cycle places pods by (poolOf).
func (c *cycle) reportNodePools() {
	held := reuse(c.scratch.held, len(c.nodes))[:len(c.nodes)] // by node
	clear(held)
	c.scratch.held = held
	for k := range c.pods {
		ps := &c.pods[k]
		switch {
		case ps.bound: // bound at the snapshot, terminating or not
			held[ps.node] += ps.req.GPUs
		case ps.node >= 0 && !ps.reserved && !c.wls[ps.wl].suspended: // bound by this plan
			held[ps.node] += ps.req.GPUs
		case c.wls[ps.wl].suspended && ps.pod.NodeName != "":
			// A suspended workload's pods wait in the cycle, but one still on a node holds
			// its GPUs there until it is gone.
			if n, ok := slices.BinarySearchFunc(c.nodes, ps.pod.NodeName, func(ns nodeState, name string) int {
				return cmp.Compare(ns.node.Name, name)
			}); ok {
				held[n] += ps.req.GPUs
			}
		}
	}
	c.plan.NodePools = make([]NodePoolStatus, len(c.pools))
	for i := range c.pools {
		c.plan.NodePools[i].Name = c.pools[i].pool.Name
	}
	for i := range c.nodes {
		ns := &c.nodes[i]
		if ns.pool < 0 {
			continue
		}
		st := &c.plan.NodePools[ns.pool]
		st.Nodes++
		if ns.node.Ready {
			st.ReadyNodes++
			st.ReadyGPUs += ns.node.Allocatable.GPUs
		}
		st.GPUs += ns.node.Allocatable.GPUs
		st.AllocatedGPUs += ns.node.Occupied.GPUs + held[i]
	}
}
