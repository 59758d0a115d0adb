package scheduler

import (
	"math"
	"time"
)

// UsageDecay is the account S28 reads: what each project held in each node pool over the
// pool's window, and what the pool could have given. The leader's loop keeps one in memory,
// observes every plan (Observe) and gives Value to the next snapshot as
// Snapshot.HistoricalUsage; a new leader seeds it from the usage history (AddUsage,
// AddCapacity). Like the rest of the package it reads no clock: time comes in as arguments. It
// is not safe for concurrent use.
//
// Each pool's window is cut into usageBuckets slices of equal width; a slice holds the GPU-
// seconds each project used in it and the pool's GPU-seconds (its GPUs times the seconds). A
// project that used nothing within the window is forgotten, so the memory is bounded by pools
// × projects using them × usageBuckets numbers. Changing a pool's window starts its account
// afresh.
type UsageDecay struct {
	pools map[string]*poolUsage
	// last is when the allocations in held began; zero when nothing is held
	last time.Time
	held []heldPool
}

// usageBuckets is how many slices a window is cut into: a window's edge moves by 1/64 of it.
const usageBuckets = 64

type poolUsage struct {
	window, halfLife time.Duration
	width            int64 // nanoseconds per slice
	newest           int64 // the newest slice's number (its start / width)
	capacity         [usageBuckets]float64
	projects         map[string]*[usageBuckets]float64
}

// heldPool is what a plan left allocated in a pool: held until the next observation.
type heldPool struct {
	pool     string
	capacity float64
	projects []heldProject
}

type heldProject struct {
	name string
	gpus float64
}

// NewUsageDecay makes an empty account for the pools.
func NewUsageDecay(pools []NodePool) *UsageDecay {
	u := &UsageDecay{pools: map[string]*poolUsage{}}
	u.configure(pools)
	return u
}

// configure follows the pools' settings: a pool gone is forgotten, a new pool or one whose
// window changed starts empty. A pool with S28 off is still accounted, with the default
// window unless it has one, so that turning S28 on finds its past.
func (u *UsageDecay) configure(pools []NodePool) {
	seen := make(map[string]bool, len(pools))
	for i := range pools {
		p := &pools[i]
		seen[p.Name] = true
		window, halfLife := p.TimeBasedFairness.Window, p.TimeBasedFairness.HalfLife
		if window <= 0 {
			window, halfLife = DefaultFairnessWindow, DefaultFairnessHalfLife
		}
		width := max(int64(window)/usageBuckets, 1)
		if pu := u.pools[p.Name]; pu != nil && pu.width == width {
			pu.window, pu.halfLife = window, max(halfLife, 0)
			continue
		}
		u.pools[p.Name] = &poolUsage{window: window, halfLife: max(halfLife, 0), width: width,
			newest: math.MinInt64, projects: map[string]*[usageBuckets]float64{}}
	}
	for name := range u.pools {
		if !seen[name] {
			delete(u.pools, name)
		}
	}
}

// Observe counts what the last observed plan held until now, then holds what plan leaves
// allocated (its projects' GPUs per pool, and each pool's ready GPUs) from now on.
func (u *UsageDecay) Observe(now time.Time, plan *Plan, pools []NodePool) {
	u.configure(pools)
	u.catchUp(now)
	u.held = u.held[:0]
	index := make(map[string]int, len(plan.NodePools))
	for _, np := range plan.NodePools {
		if u.pools[np.Name] != nil {
			index[np.Name] = len(u.held)
			u.held = append(u.held, heldPool{pool: np.Name, capacity: float64(np.ReadyGPUs)})
		}
	}
	for _, q := range plan.Projects {
		if i, ok := index[q.NodePool]; ok && q.Allocated > 0 {
			u.held[i].projects = append(u.held[i].projects, heldProject{q.Name, float64(q.Allocated)})
		}
	}
	u.last = now
}

// Interrupt stops counting what the last plan held: the loop stopped watching (its replica
// stopped leading), and the time until it watches again is not known to have been used.
func (u *UsageDecay) Interrupt() {
	u.held, u.last = u.held[:0], time.Time{}
}

// catchUp counts what is held from u.last until now.
func (u *UsageDecay) catchUp(now time.Time) {
	if u.last.IsZero() || !now.After(u.last) {
		return
	}
	for i := range u.held {
		h := &u.held[i]
		pu := u.pools[h.pool]
		if pu == nil {
			continue
		}
		pu.add("", u.last, now, h.capacity)
		for _, p := range h.projects {
			pu.add(p.name, u.last, now, p.gpus)
		}
	}
	u.last = now
}

// AddUsage counts gpuSeconds a project used in a pool, spread evenly over [from, to): how a
// new leader seeds the account from the usage history. Use outside the window is ignored.
func (u *UsageDecay) AddUsage(pool, project string, from, to time.Time, gpuSeconds float64) {
	if pu := u.pools[pool]; pu != nil && to.After(from) && gpuSeconds > 0 {
		pu.add(project, from, to, gpuSeconds/to.Sub(from).Seconds())
	}
}

// AddCapacity counts the GPU-seconds a pool could give over [from, to), as AddUsage does.
func (u *UsageDecay) AddCapacity(pool string, from, to time.Time, gpuSeconds float64) {
	if pu := u.pools[pool]; pu != nil && to.After(from) && gpuSeconds > 0 {
		pu.add("", from, to, gpuSeconds/to.Sub(from).Seconds())
	}
}

// Value is, for each pool with S28 on, each project's decayed use of the pool over its
// window as a fraction of the pool's decayed capacity (Snapshot.HistoricalUsage): use and
// capacity that are Δt old count 0.5^(Δt/halfLife). What the last plan holds counts until now.
func (u *UsageDecay) Value(now time.Time, pools []NodePool) map[string]map[string]float64 {
	u.configure(pools)
	u.catchUp(now)
	var out map[string]map[string]float64
	for i := range pools {
		if !pools[i].TimeBasedFairness.Enabled {
			continue
		}
		pu := u.pools[pools[i].Name]
		pu.advance(pu.sliceAt(now.UnixNano()))
		var decay [usageBuckets]float64
		capacity := 0.0
		for b := range usageBuckets {
			n := pu.newest - int64(b)
			mid := float64(n)*float64(pu.width) + float64(pu.width)/2
			age := max(float64(now.UnixNano())-mid, 0)
			decay[b] = 1
			if pu.halfLife > 0 {
				decay[b] = math.Exp2(-age / float64(pu.halfLife))
			}
			capacity += pu.capacity[pu.slot(n)] * decay[b]
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		shares := make(map[string]float64, len(pu.projects))
		out[pools[i].Name] = shares
		if capacity <= 0 {
			continue
		}
		for name, slices := range pu.projects {
			used := 0.0
			for b := range usageBuckets {
				used += slices[pu.slot(pu.newest-int64(b))] * decay[b]
			}
			shares[name] = min(used/capacity, 1)
		}
	}
	return out
}

func (pu *poolUsage) sliceAt(ns int64) int64 {
	n := ns / pu.width
	if ns < 0 && ns%pu.width != 0 {
		n--
	}
	return n
}

func (pu *poolUsage) slot(n int64) int {
	return int(((n % usageBuckets) + usageBuckets) % usageBuckets)
}

// slicesOf is a project's slices, made when it first uses the pool.
func (pu *poolUsage) slicesOf(project string) *[usageBuckets]float64 {
	s := pu.projects[project]
	if s == nil {
		s = new([usageBuckets]float64)
		pu.projects[project] = s
	}
	return s
}

// advance makes slice n the newest: the slices that leave the window are emptied, and the
// projects left with nothing in it forgotten.
func (pu *poolUsage) advance(n int64) {
	if n <= pu.newest {
		return
	}
	if pu.newest == math.MinInt64 || n-pu.newest >= usageBuckets {
		pu.capacity = [usageBuckets]float64{}
		clear(pu.projects)
		pu.newest = n
		return
	}
	for m := pu.newest + 1; m <= n; m++ {
		s := pu.slot(m)
		pu.capacity[s] = 0
		for _, slices := range pu.projects {
			slices[s] = 0
		}
	}
	pu.newest = n
	for name, slices := range pu.projects {
		if *slices == ([usageBuckets]float64{}) {
			delete(pu.projects, name)
		}
	}
}

// add counts rate (GPUs) over [from, to) into a project's slices (the pool's capacity when
// project is empty), slice by slice; what lies before the window is dropped.
func (pu *poolUsage) add(project string, from, to time.Time, rate float64) {
	lo, hi := from.UnixNano(), to.UnixNano()
	if hi <= lo || rate <= 0 {
		return
	}
	pu.advance(pu.sliceAt(hi - 1))
	oldest := (pu.newest - usageBuckets + 1) * pu.width
	lo = max(lo, oldest)
	if lo >= hi {
		return
	}
	slices := &pu.capacity
	if project != "" {
		slices = pu.slicesOf(project) // after advancing, which forgets empty projects
	}
	for lo < hi {
		n := pu.sliceAt(lo)
		end := min((n+1)*pu.width, hi)
		slices[pu.slot(n)] += rate * float64(end-lo) / float64(time.Second)
		lo = end
	}
}
