package scheduler

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkCycleTimeFair is BenchmarkCycle and BenchmarkReclaim with S28 off and on in every
// pool (kValue 1, every project with some past use), one after the other: what S28 adds to a
// cycle. Run with -count to alternate them.
func BenchmarkCycleTimeFair(b *testing.B) {
	for _, c := range []struct {
		name string
		snap func() *Snapshot
	}{
		{"reference", func() *Snapshot { return genSnapshot(1, referenceConfig(5000, 10000)) }},
		{"reclaim", reclaimSnapshot},
	} {
		off := c.snap()
		r := rand.New(rand.NewPCG(1, 28))
		on := withPastUse(off, r, func(tf *TimeBasedFairness) { tf.Enabled, tf.KValue = true, 1 })
		for _, u := range on.HistoricalUsage {
			for _, p := range on.Projects {
				if _, ok := u[p.Name]; !ok {
					u[p.Name] = r.Float64() / 10
				}
			}
		}
		b.Run(c.name+"/off", func(b *testing.B) { benchmarkPlan(b, off) })
		b.Run(c.name+"/on", func(b *testing.B) { benchmarkPlan(b, on) })
	}
}
