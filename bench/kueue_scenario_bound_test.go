package bench

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"
)

// scenarioBounds are the scenario's physical bounds, each a time no scheduler can finish
// sooner than, counted like the wall time from the first create.
type scenarioBounds struct {
	work float64 // GPU-seconds asked for
	// workBound is the work over the GPUs: the bound as Kueue's scenario states it, as if all
	// the work were there from the start.
	workBound time.Duration
	// arrivalBound adds the arrivals: the work created at or after a time t cannot be done
	// before t + that work over the GPUs, whatever ran earlier; the latest such time. It is
	// the bound of a scheduler that wastes nothing, knows the future and splits Jobs at will.
	arrivalBound time.Duration
	// lastEnd is the last creation plus its runtime.
	lastEnd time.Duration
}

// usageCeiling is the usage (work over GPUs × wall) of a round that ends at arrivalBound:
// no scheduler's is higher.
func (b scenarioBounds) usageCeiling() float64 {
	return b.work / (scenarioGPUs * b.arrivalBound.Seconds())
}

// scenarioArrival is one creation of the scaled scenario, counted from the round's start:
// every queue creates a Job of the class at that time.
type scenarioArrival struct {
	at         time.Duration
	gpuSeconds float64 // of that creation, over all the queues
}

// scenarioArrivals lists the scaled scenario's creations in order of time.
func scenarioArrivals() []scenarioArrival {
	var all []scenarioArrival
	for _, c := range scenarioClasses {
		count, interval, run := c.scaled()
		for i := range count {
			all = append(all, scenarioArrival{at: time.Duration(i+1) * interval,
				gpuSeconds: float64(scenarioCohorts*scenarioQueues) * float64(c.gpus) * float64(run)})
		}
	}
	slices.SortStableFunc(all, func(a, b scenarioArrival) int { return cmp.Compare(a.at, b.at) })
	return all
}

// scenarioBound computes the bounds from the scaled classes.
func scenarioBound() scenarioBounds {
	arrivals := scenarioArrivals()
	var b scenarioBounds
	for _, a := range arrivals {
		b.work += a.gpuSeconds
	}
	for _, c := range scenarioClasses {
		count, interval, run := c.scaled()
		b.lastEnd = max(b.lastEnd, time.Duration(count)*interval+time.Duration(run)*time.Second)
	}
	first := arrivals[0].at
	b.workBound = durationOf(b.work / scenarioGPUs)
	later := b.work // the work created at or after arrivals[i].at
	for i, a := range arrivals {
		if i == 0 || a.at != arrivals[i-1].at {
			b.arrivalBound = max(b.arrivalBound, a.at+durationOf(later/scenarioGPUs))
		}
		later -= a.gpuSeconds
	}
	b.arrivalBound = max(b.arrivalBound, b.lastEnd) - first
	b.lastEnd -= first
	return b
}

func durationOf(seconds float64) time.Duration { return time.Duration(seconds * float64(time.Second)) }

// The scaled scenario's first large Jobs come 12 s after the start: until then only small and
// medium work arrives (about 210 GPUs' worth on 600), and the 37,440 GPU-seconds created from
// then on take 62.4 s more: 74.4 s from the start, 73.4 s from the first create (at 1 s).
// Against 66 s (the work alone) no scheduler can reach 90 % usage: 39,600 ÷ (600 × 73.4) is
// 89.9 %.
func TestScenarioBoundsCountTheArrivals(t *testing.T) {
	b := scenarioBound()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"work (GPU-seconds)", b.work, 39600},
		{"work bound (s)", b.workBound.Seconds(), 66},
		{"arrival bound (s)", b.arrivalBound.Seconds(), 73.4},
		{"last creation plus its runtime (s)", b.lastEnd.Seconds(), 69},
		{"usage ceiling (%)", 100 * b.usageCeiling(), 89.918},
	} {
		if math.Abs(c.got-c.want) > 0.001 {
			t.Errorf("%s = %.3f, want %.3f", c.name, c.got, c.want)
		}
	}
}
