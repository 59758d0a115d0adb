package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/scheduler"
)

// TestWorkloadPageSaysWhereItLanded: the workload page's sentence names the domain by its
// level's word and value (with the wider values when there are some) and the topology it was
// read on; a level no topology defines is said to be that label's value alone; a preferred
// request spread wider than its levels says so.
func TestWorkloadPageSaysWhereItLanded(t *testing.T) {
	for _, tc := range []struct {
		placement scheduler.TopologyPlacement
		want      string
	}{
		{scheduler.TopologyPlacement{Topology: "racks", Required: true, Level: "topology.arbiter.dev/rack", Domain: "b1/r3"},
			"In rack r3 (b1/r3), by topology racks."},
		{scheduler.TopologyPlacement{Topology: "racks", Level: "topology.arbiter.dev/block", Domain: "b1"},
			"In block b1, by topology racks."},
		{scheduler.TopologyPlacement{Required: true, Level: "example.com/switch", Domain: "s7"},
			"In switch s7; no topology defines example.com/switch: its domains are the nodes sharing that label's value."},
		{scheduler.TopologyPlacement{Topology: "racks"},
			"Spread wider than the levels it prefers (topology racks): no one domain of them had room."},
	} {
		if d := cmp.Diff(tc.want, topologyLanding(tc.placement).Sentence); d != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.placement, d)
		}
	}
}
