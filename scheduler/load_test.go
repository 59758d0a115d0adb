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
