package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
)

// TestNodesGroupByTheDomainsOfALevel: grouped by rack, nodes fall into their racks, each named
// by its block too (two racks r1 in different blocks are two domains, as the scheduler counts
// them); a domain's free GPUs are those of its ready, schedulable nodes; nodes without the
// labels come last; grouped by block, the racks of a block are one domain. A grouping the
// topologies do not have, or the node's own level, groups nothing.
func TestNodesGroupByTheDomainsOfALevel(t *testing.T) {
	gpus := func(n int64) scheduler.Resources { return scheduler.Resources{GPUs: n} }
	node := func(name, block, rack string, allocatable int64) scheduler.Node {
		labels := map[string]string{"kubernetes.io/hostname": name}
		if block != "" {
			labels["example.com/block"], labels["example.com/rack"] = block, rack
		}
		return scheduler.Node{Name: name, Labels: labels, Ready: true, Allocatable: gpus(allocatable)}
	}
	snap := &scheduler.Snapshot{
		Topologies: []scheduler.Topology{{Name: "dc", Levels: []string{"example.com/block", "example.com/rack", "kubernetes.io/hostname"}}},
		Nodes: []scheduler.Node{
			node("n1", "b1", "r1", 8), node("n2", "b1", "r1", 8), node("n3", "b2", "r1", 8), node("n4", "b1", "r2", 8),
			node("n5", "", "", 4),
		},
		Workloads: []scheduler.Workload{{UID: "u1", Namespace: "ml", Name: "train", Project: "team",
			Pods: []scheduler.Pod{{UID: "p", Name: "train-0", NodeName: "n1", Requests: gpus(6)}}}},
	}
	snap.Nodes[1].Unschedulable = true // its free GPUs are no one's to take
	grid := nodeGrid(snap, nil, gridFilter{}, func(string) bool { return true }, nil)
	names := func(ds []views.NodeDomain) map[string][]string {
		out := map[string][]string{}
		for _, d := range ds {
			for _, n := range d.Nodes {
				out[d.Path] = append(out[d.Path], n.Name)
			}
		}
		return out
	}
	byRack := nodeDomains(snap, grid.Nodes, "dc:example.com/rack")
	type summary struct {
		Level, Name, Path, Context string
		Unlabelled                 bool
		GPUs, Free                 int
	}
	var got []summary
	for _, d := range byRack {
		got = append(got, summary{d.Level, d.Name, d.Path, d.Context, d.Unlabelled, d.GPUs, d.Free})
	}
	want := []summary{
		{"rack", "r1", "b1/r1", "in block b1", false, 16, 2}, // n1: 2 free; n2 unschedulable
		{"rack", "r2", "b1/r2", "in block b1", false, 8, 8},
		{"rack", "r1", "b2/r1", "in block b2", false, 8, 8},
		{"rack", "not in a rack", "", "nodes lacking a label of example.com/block, example.com/rack", true, 4, 4},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("domains by rack (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][]string{"b1/r1": {"n1", "n2"}, "b1/r2": {"n4"}, "b2/r1": {"n3"}, "": {"n5"}}, names(byRack)); d != "" {
		t.Errorf("nodes by rack (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][]string{"b1": {"n1", "n2", "n4"}, "b2": {"n3"}, "": {"n5"}}, names(nodeDomains(snap, grid.Nodes, "dc:example.com/block"))); d != "" {
		t.Errorf("nodes by block (-want +got):\n%s", d)
	}
	for _, none := range []string{"", "dc", "dc:example.com/zone", "other:example.com/rack", "dc:kubernetes.io/hostname"} {
		if ds := nodeDomains(snap, grid.Nodes, none); ds != nil {
			t.Errorf("grouping %q made %d domains, want none", none, len(ds))
		}
	}
	wantChoices := []views.GroupChoice{{Value: "dc:example.com/block", Label: "block (dc: example.com/block)"}, {Value: "dc:example.com/rack", Label: "rack (dc: example.com/rack)"}}
	if d := cmp.Diff(wantChoices, topologyGroupings(snap)); d != "" {
		t.Errorf("groupings (-want +got):\n%s", d)
	}
}
