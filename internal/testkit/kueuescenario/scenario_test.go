package kueuescenario

import (
	"math"
	"testing"
)

// The scaled scenario's first large Jobs come 12 s after the start: until then only small and
// medium work arrives (about 210 GPUs' worth on 600), and the 37,440 GPU-seconds created from
// then on take 62.4 s more: 74.4 s from the start, 73.4 s from the first create (at 1 s).
// Against 66 s (the work alone) no scheduler can reach 90 % usage: 39,600 ÷ (600 × 73.4) is
// 89.9 %.
func TestScenarioBoundsCountTheArrivals(t *testing.T) {
	b := Bound()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"work (GPU-seconds)", b.Work, 39600},
		{"work bound (s)", b.WorkBound.Seconds(), 66},
		{"arrival bound (s)", b.ArrivalBound.Seconds(), 73.4},
		{"last creation plus its runtime (s)", b.LastEnd.Seconds(), 69},
		{"usage ceiling (%)", 100 * b.UsageCeiling(), 89.918},
		{"first create (s)", FirstCreate().Seconds(), 1},
	} {
		if math.Abs(c.got-c.want) > 0.001 {
			t.Errorf("%s = %.3f, want %.3f", c.name, c.got, c.want)
		}
	}
}
