// Package fairness is the fairness ledger: over a period, for one project and each node pool,
// the GPU-hours it was entitled to (its fair share, capped by what it asked for), what it
// received, and why it received less, in plain words. It reads what was recorded — the usage
// history's samples and the workloads' waits — and decides nothing: it is pure, like the core.
//
// A sample's shortfall is min(fair share, demand) − allocated, where demand is allocated plus
// pending. The shortfall's GPU-hours are shared among the project's workloads that waited
// during the sample, in proportion to their waiting GPU-hours there, each under the cause of
// its wait (Causes); a sample with a shortfall and no recorded wait is put down to the pool,
// or is unexplained.
package fairness

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// Sample is a project's figures in one node pool over one span of recorded time: averages in
// GPUs, as the usage history gives them.
type Sample struct {
	At       time.Time
	Span     time.Duration // recorded time the figures average over
	Width    time.Duration // the bucket the figures were recorded in: [At, At+Width), Span of it recorded
	NodePool string
	// NonPreemptible, Preemptible and Borrowed add up to what was allocated.
	NonPreemptible, Preemptible, Borrowed float64
	Pending                               float64 // GPUs its waiting work asked for
	Deserved, FairShare                   float64
}

// Allocated is what the project held.
func (s Sample) Allocated() float64 { return s.NonPreemptible + s.Preemptible + s.Borrowed }

// Pool is one node pool over the same span, over every project: its capacity, what was
// allocated and what of it was non-preemptible.
type Pool struct {
	At                                              time.Time
	NodePool                                        string
	CapacityGPUs, AllocatedGPUs, NonPreemptibleGPUs float64
}

// Workload is one of the project's workloads as its record and events keep it.
type Workload struct {
	Name     string
	QueuedAt time.Time
	// FinishedAt is when it completed, failed or was deleted; zero while it lives.
	FinishedAt time.Time
	GPUs       float64 // GPUs it asks for, all its pods
	Gang       int     // its pods, placed together or not at all
	// Reason is its waiting reason now (the scheduler's code), for a workload that waits now;
	// a workload that has started keeps no record of why it waited before.
	Reason string
	Events []Event // oldest first
}

// Event is a workload event the ledger reads: Admitted, Preempted or Reclaimed.
type Event struct {
	At   time.Time
	Kind string
	// By is the project of the workload that preempted or reclaimed it ("" when not recorded).
	By string
}

// Cause is why a shortfall happened, as a code; Words says it.
type Cause string

const (
	// OwnLimit: its work waited on the project's own GPU limit.
	OwnLimit Cause = "OwnLimit"
	// ReclaimedBy: its work was reclaimed (S17) for another project's deserved quota, and
	// waited to come back.
	ReclaimedBy Cause = "ReclaimedBy"
	// PreemptedBy: its work was preempted (S16) by higher-priority work, and waited to come back.
	PreemptedBy Cause = "PreemptedBy"
	// PoolFullOfNonPreemptible: the pool's GPUs not held by non-preemptible work were fewer
	// than the waiting workload asked for, so nothing could be preempted or reclaimed for it.
	PoolFullOfNonPreemptible Cause = "PoolFullOfNonPreemptible"
	// GangDidNotFit: the pool had as many free GPUs as the gang asked for, but not on nodes
	// that could take all its pods together (or not all its pods existed yet).
	GangDidNotFit Cause = "GangDidNotFit"
	// PoolFull: it waited for GPUs that others held and the scheduler did not take back.
	PoolFull Cause = "PoolFull"
	// Unexplained: pending demand with no recorded wait of its workloads in that span.
	Unexplained Cause = "Unexplained"
)

// Ledger is a project's account over [From, To).
type Ledger struct {
	From, To time.Time
	Total    Figures
	Pools    []PoolLedger // by pool name
}

// PoolLedger is the account in one node pool.
type PoolLedger struct {
	NodePool string
	Figures
	Shortfalls []Shortfall // the largest first
}

// Figures are GPU-hours over the period.
type Figures struct {
	Deserved, FairShare float64
	// Entitled is its fair share capped by its demand (allocated plus pending), span by span.
	Entitled float64
	// Received is what it was allocated, and NonPreemptible, Borrowed what of it was.
	Received, NonPreemptible, Borrowed float64
	// Shortfall is entitled GPU-hours it did not receive (spans where it received more are
	// not set against it).
	Shortfall float64
	// NoDemand is fair share it did not ask for: not a shortfall, but why it received less
	// than its fair share.
	NoDemand float64
	// RecordedHours is how much of the period the history recorded.
	RecordedHours float64
}

// Shortfall is part of a pool's shortfall put down to one cause (and, for a preemption or a
// reclaim, to the project that took the GPUs).
type Shortfall struct {
	Cause    Cause
	By       string // the project that preempted or reclaimed, for those causes
	GPUHours float64
}

// Input is what one project's ledger is computed from.
type Input struct {
	From, To  time.Time
	Samples   []Sample
	Pools     []Pool // over the same spans as Samples (matched by At and NodePool)
	Workloads []Workload
}

// Compute is the project's ledger over [in.From, in.To).
func Compute(in Input) Ledger {
	waits := Waits(in.Workloads, in.To)
	type poolAt struct {
		pool string
		at   int64
	}
	pools := make(map[poolAt]Pool, len(in.Pools))
	for _, p := range in.Pools {
		pools[poolAt{p.NodePool, p.At.UnixNano()}] = p
	}
	byPool := map[string]*PoolLedger{}
	shortBy := map[string]map[Shortfall]float64{} // pool → cause and by → GPU-hours
	for _, s := range in.Samples {
		if s.Span <= 0 || !s.At.Before(in.To) || !s.At.Add(max(s.Width, s.Span)).After(in.From) {
			continue
		}
		pl := byPool[s.NodePool]
		if pl == nil {
			pl = &PoolLedger{NodePool: s.NodePool}
			byPool[s.NodePool] = pl
			shortBy[s.NodePool] = map[Shortfall]float64{}
		}
		h := s.Span.Hours()
		alloc := s.Allocated()
		demand := alloc + s.Pending
		entitled := min(s.FairShare, demand)
		short := max(entitled-alloc, 0)
		pl.Deserved += s.Deserved * h
		pl.FairShare += s.FairShare * h
		pl.Entitled += entitled * h
		pl.Received += alloc * h
		pl.NonPreemptible += s.NonPreemptible * h
		pl.Borrowed += s.Borrowed * h
		pl.Shortfall += short * h
		pl.NoDemand += max(s.FairShare-demand, 0) * h
		pl.RecordedHours += h
		if short <= 0 {
			continue
		}
		pool, known := pools[poolAt{s.NodePool, s.At.UnixNano()}]
		for k, share := range attribute(s, pool, known, waits) {
			shortBy[s.NodePool][k] += short * h * share
		}
	}
	l := Ledger{From: in.From, To: in.To}
	for _, name := range slices.Sorted(maps.Keys(byPool)) {
		pl := byPool[name]
		for k, gh := range shortBy[name] {
			k.GPUHours = gh
			pl.Shortfalls = append(pl.Shortfalls, k)
		}
		slices.SortFunc(pl.Shortfalls, func(a, b Shortfall) int {
			return cmp.Or(cmp.Compare(b.GPUHours, a.GPUHours), cmp.Compare(a.Cause, b.Cause), cmp.Compare(a.By, b.By))
		})
		l.Pools = append(l.Pools, *pl)
		l.Total.add(pl.Figures)
	}
	return l
}

// attribute shares a sample's shortfall among the causes of the waits during it: each wait
// weighs its GPUs times the time it overlapped the sample. Shares add up to 1.
func attribute(s Sample, pool Pool, poolKnown bool, waits []Wait) map[Shortfall]float64 {
	// the waits anywhere in the bucket: which part of it was recorded is not known
	end := s.At.Add(max(s.Width, s.Span))
	weights := map[Shortfall]float64{}
	total := 0.0
	for _, w := range waits {
		overlap := earlier(w.To, end).Sub(later(w.From, s.At))
		if overlap <= 0 || w.GPUs <= 0 {
			continue
		}
		weight := w.GPUs * overlap.Seconds()
		weights[Shortfall{Cause: causeOf(w, pool, poolKnown), By: w.By}] += weight
		total += weight
	}
	if total == 0 {
		c := Unexplained
		if poolKnown && pool.CapacityGPUs-pool.NonPreemptibleGPUs < s.Pending {
			c = PoolFullOfNonPreemptible
		}
		return map[Shortfall]float64{{Cause: c}: 1}
	}
	for k := range weights {
		weights[k] /= total
	}
	return weights
}

// causeOf is why one wait waited, in one pool's span: what was recorded of it (its own limit,
// a preemption or a reclaim, a gang that could not be placed), else what the pool shows.
func causeOf(w Wait, pool Pool, poolKnown bool) Cause {
	switch w.Reason {
	case "OverLimit":
		return OwnLimit
	case "Reclaimed":
		return ReclaimedBy
	case "Preempted":
		return PreemptedBy
	case "GangIncomplete", "NoMatchingNodes":
		return GangDidNotFit
	}
	if !poolKnown {
		return Unexplained
	}
	switch {
	case pool.CapacityGPUs-pool.NonPreemptibleGPUs < w.GPUs:
		return PoolFullOfNonPreemptible
	case w.Gang > 1 && pool.CapacityGPUs-pool.AllocatedGPUs >= w.GPUs:
		return GangDidNotFit
	}
	return PoolFull
}

func (f *Figures) add(o Figures) {
	f.Deserved += o.Deserved
	f.FairShare += o.FairShare
	f.Entitled += o.Entitled
	f.Received += o.Received
	f.NonPreemptible += o.NonPreemptible
	f.Borrowed += o.Borrowed
	f.Shortfall += o.Shortfall
	f.NoDemand += o.NoDemand
	f.RecordedHours = max(f.RecordedHours, o.RecordedHours)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
