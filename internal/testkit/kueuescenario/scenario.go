// Package kueuescenario is Kueue's published scalability scenario (sigs.k8s.io/kueue v0.19.2,
// test/performance/scheduler/configs/baseline/generator.yaml) as Arbiter's benchmarks run it:
// its classes as published, how they are scaled, the organization and nodes it is mapped to,
// and the physical bounds of the scaled run. bench/ runs it on the local control plane;
// scheduler/kube's simulation runs Arbiter's rules over it on simulated time
// (docs/performance.md, "Kueue's scenario end to end").
package kueuescenario

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Kueue's: 5 cohorts × 6 ClusterQueues of nominal quota 20 and borrowing limit 100
// (reclaimWithinCohort Any, withinClusterQueue LowerPriority); per queue 350 small workloads
// (1 unit, 200 ms, one every 100 ms, priority 50), 100 medium (5 units, 500 ms, every 500 ms,
// priority 100) and 50 large (20 units, 1 s, every 1.2 s, priority 200). Here the counts are
// divided and the runtimes and creation intervals multiplied by Factor, so that the work (30 ×
// 1,320 unit-seconds on 600 GPUs: 66 s) and the arrival times stay as published while the
// Jobs are few enough (1,500) that the control plane's Job and pod throughput does not bound
// the run.
const (
	Factor  = 10
	Cohorts = 5
	Queues  = 6 // ClusterQueues (projects) per cohort (department)
	Nominal = 20
	Borrow  = 100 // Kueue's borrowing limit; Arbiter's project limit is nominal + this
	// CohortQuota is a cohort's quota, its queues' nominal quotas together: Arbiter's
	// department's quota and limit, so that its projects borrow only from each other.
	CohortQuota = Queues * Nominal
	Nodes       = 15
	NodeGPUs    = 40 // a large workload's 20 GPUs fit on a half-used node
	GPUs        = Nodes * NodeGPUs
)

// Class is one workloads set of Kueue's scenario, as published, and the priority each
// system gives it.
type Class struct {
	Name            string
	Count           int           // per queue, as published
	Interval        time.Duration // between creations, as published
	Runtime         time.Duration // as published
	GPUs            int64
	KueuePriority   int    // a WorkloadPriorityClass of this value, named after the class
	ArbiterPriority string // an entry of Arbiter's priority dictionary, in the same order
}

// Classes are the scenario's workloads sets.
var Classes = []Class{
	{Name: "small", Count: 350, Interval: 100 * time.Millisecond, Runtime: 200 * time.Millisecond, GPUs: 1, KueuePriority: 50, ArbiterPriority: "low"},
	{Name: "medium", Count: 100, Interval: 500 * time.Millisecond, Runtime: 500 * time.Millisecond, GPUs: 5, KueuePriority: 100, ArbiterPriority: "medium"},
	{Name: "large", Count: 50, Interval: 1200 * time.Millisecond, Runtime: time.Second, GPUs: 20, KueuePriority: 200, ArbiterPriority: "high"},
}

// Scaled is the class as run here: Factor times fewer Jobs, created Factor times further
// apart, each running Factor times longer (whole seconds: kwok's pod-complete stage counts
// seconds). The i-th Job (from 0) of each queue is created (i + 1) × interval after the start.
func (c Class) Scaled() (count int, interval time.Duration, runSeconds int) {
	run := c.Runtime * Factor
	if run%time.Second != 0 || c.Count%Factor != 0 {
		panic(fmt.Sprintf("class %s does not scale by %d into whole Jobs and seconds", c.Name, Factor))
	}
	return c.Count / Factor, c.Interval * Factor, int(run / time.Second)
}

// Bounds are the scenario's physical bounds, each a time no scheduler can finish sooner
// than, counted like the wall time from the first create.
type Bounds struct {
	Work float64 // GPU-seconds asked for
	// WorkBound is the work over the GPUs: the bound as Kueue's scenario states it, as if all
	// the work were there from the start.
	WorkBound time.Duration
	// ArrivalBound adds the arrivals: the work created at or after a time t cannot be done
	// before t + that work over the GPUs, whatever ran earlier; the latest such time. It is
	// the bound of a scheduler that wastes nothing, knows the future and splits Jobs at will.
	ArrivalBound time.Duration
	// LastEnd is the last creation plus its runtime.
	LastEnd time.Duration
}

// UsageCeiling is the usage (work over GPUs × wall) of a round that ends at ArrivalBound: no
// scheduler's is higher.
func (b Bounds) UsageCeiling() float64 {
	return b.Work / (GPUs * b.ArrivalBound.Seconds())
}

// arrival is one creation of the scaled scenario, counted from the round's start: every queue
// creates a Job of the class at that time.
type arrival struct {
	at         time.Duration
	gpuSeconds float64 // of that creation, over all the queues
}

// arrivals lists the scaled scenario's creations in order of time.
func arrivals() []arrival {
	var all []arrival
	for _, c := range Classes {
		count, interval, run := c.Scaled()
		for i := range count {
			all = append(all, arrival{at: time.Duration(i+1) * interval,
				gpuSeconds: float64(Cohorts*Queues) * float64(c.GPUs) * float64(run)})
		}
	}
	slices.SortStableFunc(all, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	return all
}

// FirstCreate is when, from the start, the scaled scenario's first Job is created; wall
// times are counted from it.
func FirstCreate() time.Duration { return arrivals()[0].at }

// Bound computes the bounds from the scaled classes.
func Bound() Bounds {
	all := arrivals()
	var b Bounds
	for _, a := range all {
		b.Work += a.gpuSeconds
	}
	for _, c := range Classes {
		count, interval, run := c.Scaled()
		b.LastEnd = max(b.LastEnd, time.Duration(count)*interval+time.Duration(run)*time.Second)
	}
	first := all[0].at
	b.WorkBound = durationOf(b.Work / GPUs)
	later := b.Work // the work created at or after all[i].at
	for i, a := range all {
		if i == 0 || a.at != all[i-1].at {
			b.ArrivalBound = max(b.ArrivalBound, a.at+durationOf(later/GPUs))
		}
		later -= a.gpuSeconds
	}
	b.ArrivalBound = max(b.ArrivalBound, b.LastEnd) - first
	b.LastEnd -= first
	return b
}

func durationOf(seconds float64) time.Duration { return time.Duration(seconds * float64(time.Second)) }
