package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTwoHalvesLoadAsOne: loading that works the two halves of the workloads out at once, each
// resolving in a memo of its own (loadWorkloads), plans as loading them all on one goroutine:
// the same resolutions, warnings in the same order, the same gangs and nodes.
func TestTwoHalvesLoadAsOne(t *testing.T) {
	configs := map[string]genConfig{
		"varied":   {pools: 3, nodes: 60, gpusPerNode: 8, depts: 4, projects: 16, running: 300, pending: 900, maxGang: 4, maxGPUs: 2, varied: true},
		"one pool": {pools: 1, nodes: 40, gpusPerNode: 8, depts: 3, projects: 12, running: 300, pending: 700, maxGang: 3, maxGPUs: 1, varied: true},
	}
	saved := parallelLoad
	defer func() { parallelLoad = saved }()
	for name, cfg := range configs {
		for seed := range uint64(4) {
			s := genSnapshot(seed+1, cfg)
			for i := range s.Workloads {
				if i%7 == 0 { // some with an invalid gang size, which warns
					s.Workloads[i].Annotations[AnnotationMinMembers] = "none"
				}
			}
			parallelLoad = 1 << 30
			one := s.Plan()
			parallelLoad = 2
			halves := s.Plan()
			if len(one.Warnings) == 0 || len(one.Binds) == 0 {
				t.Fatalf("%s seed %d: no warnings or no binds, the snapshot tests little", name, seed)
			}
			if d := cmp.Diff(one, halves); d != "" {
				t.Errorf("%s seed %d: two halves plan otherwise than one goroutine (-one +halves):\n%s", name, seed, d)
			}
		}
	}
}

// TestNodePoolOf_DefaultPoolLabel: the pool that selects no label takes every node no other pool
// selects, among them a node labelled as the API answers the default pool's label
// (arbiter.dev/node-pool=default, store.DefaultNodePoolLabelValue), so that answer is true.
func TestNodePoolOf_DefaultPoolLabel(t *testing.T) {
	pools := []NodePool{{Name: "a100", LabelKey: "arbiter.dev/node-pool", LabelValue: "a100"}, {Name: "default"}}
	for labels, want := range map[string]string{"a100": "a100", "default": "default", "": "default", "h100": "default"} {
		n := &Node{Name: "n", Labels: map[string]string{}}
		if labels != "" {
			n.Labels["arbiter.dev/node-pool"] = labels
		}
		if got := NodePoolOf(pools, n); got != want {
			t.Errorf("a node labelled %q is in pool %q, want %q", labels, got, want)
		}
	}
}
