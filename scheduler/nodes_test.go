package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSearchShortcutsChooseAsAFullSearch: what lets a node search pass over nodes too full for
// a request (skipMark, poolState.room) changes no choice. Each snapshot is planned with them and
// reading every node, and the plans must be equal: the snapshots pile pods without GPUs onto the
// fullest nodes until their CPU runs out, and the varied ones evict and roll back, which gives
// nodes room again.
func TestSearchShortcutsChooseAsAFullSearch(t *testing.T) {
	configs := map[string]genConfig{
		"reference":  referenceConfig(3000, 12000),
		"small full": {pools: 1, nodes: 40, gpusPerNode: 8, depts: 3, projects: 12, running: 300, pending: 2500, maxGang: 1, maxGPUs: 1},
		"varied":     {pools: 3, nodes: 60, gpusPerNode: 8, depts: 4, projects: 16, running: 400, pending: 3000, maxGang: 4, maxGPUs: 2, varied: true},
	}
	for name, cfg := range configs {
		for seed := range uint64(4) {
			s := genSnapshot(seed+1, cfg)
			withMarks := s.Plan()
			readEveryNode = true
			fullSearch := s.Plan()
			readEveryNode = false
			if len(withMarks.Binds) == 0 {
				t.Fatalf("%s seed %d: nothing bound, the snapshot tests nothing", name, seed)
			}
			if d := cmp.Diff(fullSearch, withMarks); d != "" {
				t.Errorf("%s seed %d: the plan with shortcuts differs from a full search (-full +shortcuts):\n%s", name, seed, d)
			}
		}
	}
}
