package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSkipMarksChooseAsAFullSearch: the marks that let a node search skip nodes too full for a
// request (skipMark) change no choice. Each snapshot is planned with marks and with none (every
// node read), and the plans must be equal: the snapshots pile pods without GPUs onto the
// fullest nodes until their CPU runs out, and the varied ones evict and roll back, which gives
// nodes room again.
func TestSkipMarksChooseAsAFullSearch(t *testing.T) {
	configs := map[string]genConfig{
		"reference":  referenceConfig(3000, 12000),
		"small full": {pools: 1, nodes: 40, gpusPerNode: 8, depts: 3, projects: 12, running: 300, pending: 2500, maxGang: 1, maxGPUs: 1},
		"varied":     {pools: 3, nodes: 60, gpusPerNode: 8, depts: 4, projects: 16, running: 400, pending: 3000, maxGang: 4, maxGPUs: 2, varied: true},
	}
	for name, cfg := range configs {
		for seed := range uint64(4) {
			s := genSnapshot(seed+1, cfg)
			withMarks := s.Plan()
			saved := maxMarks
			maxMarks = 0
			fullSearch := s.Plan()
			maxMarks = saved
			if len(withMarks.Binds) == 0 {
				t.Fatalf("%s seed %d: nothing bound, the snapshot tests nothing", name, seed)
			}
			if d := cmp.Diff(fullSearch, withMarks); d != "" {
				t.Errorf("%s seed %d: the plan with marks differs from a full search (-full +marks):\n%s", name, seed, d)
			}
		}
	}
}
