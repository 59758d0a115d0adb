package server

import "github.com/arbiterhq/arbiter/scheduler"

// WorkloadTopology says where a workload that asks for a topology was placed in the last
// cycle's plan (S29), by pod set; none without a cycle.
func (last lastPods) WorkloadTopology(uid string) []scheduler.TopologyPlacement {
	r := last()
	if r == nil || r.Plan == nil {
		return nil
	}
	var out []scheduler.TopologyPlacement
	for _, p := range r.Plan.Topology {
		if p.Workload == uid {
			out = append(out, p)
		}
	}
	return out
}
