package scheduler

import (
	"math"
	"time"
)

// Time-based fair share (S28, after KAI's time-aware fairness). In a node pool that has it on,
// the weighted order of S11's second phase, and reclaim's choice of whom to take from (S17),
// count each sibling's past use of the pool as well as its use now.
//
// A unit's past use U is its decayed GPU-seconds in the pool over the pool's window, divided
// by the pool's decayed GPU-seconds over the same window (Snapshot.HistoricalUsage, made by
// UsageDecay): 0 for a unit that used nothing, 1 for one that held the whole pool throughout.
// Its weight share W' is its over-quota weight divided by the sum of its competing siblings'
// (those with work waiting or GPUs held in the pool). KAI's formula gives it the part
//
//	P = max(W' + k·(W' − U), 0)
//
// of the over-quota GPUs, k being the pool's kValue: a unit that used less than its share
// gets more, one that used more gets less, and one whose P falls to 0 goes last, as weight 0
// does in S11. Siblings are then ordered as in S11 with P in place of the weight (over-quota
// use per P), and when that ties (two units each using nothing over quota, say) the one with
// less past use goes first. Deserved quota is untouched: below it the order is S11's, and
// S25's queue priority still comes before all of this.
//
// P is kept in fixed point, scaled by ΣW·fairScale/(1+k), so that a weight W with no past use
// anywhere is exactly W·fairScale: with no history the order is S11's exactly.

// TimeBasedFairness is a node pool's S28 setting. Its zero value is off.
type TimeBasedFairness struct {
	Enabled bool
	// Window is how far back use counts; HalfLife is how long ago use counts half (0: use
	// anywhere in the window counts fully). The core reads neither: they shape the usage
	// the caller gives in Snapshot.HistoricalUsage (UsageDecay).
	Window, HalfLife time.Duration
	// KValue is how strongly past use moves the order (KAI's kValue); 0 (or less) moves
	// nothing: the order is S11's.
	KValue float64
}

// The settings a pool gets when an admin turns S28 on without choosing.
const (
	DefaultFairnessWindow   = 7 * 24 * time.Hour
	DefaultFairnessHalfLife = 24 * time.Hour
	DefaultFairnessKValue   = 1.0
)

// fairScale is the fixed point of S28's weights.
const fairScale = 1 << 16

// timeShare is what S28 makes of a unit's past use in one pool.
type timeShare struct {
	on bool
	// weight is P in fixed point (see above); ≤ 0 when P is 0
	weight int64
	used   float64
}

// key is the unit's fair key with S28: S11's below deserved quota, P in place of the weight
// past it, and past use to break ties.
func (t *timeShare) key(alloc, deserved int64) fairKey {
	if deserved > 0 && alloc < deserved {
		return fairKey{class: 0, num: alloc, den: deserved}
	}
	k := makeFairKey(alloc, deserved, t.weight)
	k.used = t.used
	return k
}

// timeWeight is P in fixed point for a unit of weight w among siblings whose weights sum to
// sum, that used the fraction used of the pool, with strength k.
func timeWeight(w, sum int64, used, k float64) int64 {
	if w <= 0 || sum <= 0 {
		return 0
	}
	return w*fairScale - int64(math.Round(k/(1+k)*used*float64(sum)*fairScale))
}

// pastUse is a project's past use of a pool, as the snapshot gives it, held to [0, 1].
func pastUse(hist map[string]float64, project string) float64 {
	u := hist[project]
	if !(u > 0) { // NaN too
		return 0
	}
	return min(u, 1)
}

// strength is a pool's kValue, negative ones (and NaN) read as 0.
func strength(tf *TimeBasedFairness) float64 {
	if !(tf.KValue > 0) {
		return 0
	}
	return min(tf.KValue, 1e6)
}

// timeFairOn reports whether S28 changes anything in a pool: on, with a kValue above 0.
func timeFairOn(tf *TimeBasedFairness) bool { return tf.Enabled && strength(tf) > 0 }

// weighPastUse sets, in every pool with S28 on, each project's and department's timeShare:
// past use for all of them, and P for the projects competing there (their first pool) and the
// departments whose arenas do. Called once the arenas are made and before anything is pushed:
// the weights hold for the whole cycle.
func (c *cycle) weighPastUse() {
	on := false
	for i := range c.pools {
		on = on || timeFairOn(&c.pools[i].pool.TimeBasedFairness)
	}
	if !on {
		return
	}
	nPools := len(c.pools)
	slab := make([]timeShare, (len(c.projects)+len(c.depts))*nPools)
	for j := range c.projects {
		c.projects[j].timeFair, slab = slab[:nPools:nPools], slab[nPools:]
	}
	for d := range c.depts {
		c.depts[d].timeFair, slab = slab[:nPools:nPools], slab[nPools:]
	}
	// siblings compete when they have work waiting, or hold GPUs in the pool
	arenaWeight := make([]int64, len(c.arenas))
	arenaActive := make([]bool, len(c.arenas))
	for j := range c.projects {
		p := &c.projects[j]
		pool := c.home(int32(j))
		if int(pool) < nPools && (c.advance(int32(j)) || p.shares[pool].alloc > 0) {
			arenaWeight[p.arena] += p.shares[pool].quota.OverQuotaWeight
			arenaActive[p.arena] = true
		}
	}
	deptWeight := make([]int64, nPools)
	for a := range c.arenas {
		ar := &c.arenas[a]
		if int(ar.pool) < nPools && (arenaActive[a] || c.depts[ar.dept].shares[ar.pool].alloc > 0) {
			deptWeight[ar.pool] += c.depts[ar.dept].shares[ar.pool].quota.OverQuotaWeight
		}
	}
	for pool := range c.pools {
		tf := &c.pools[pool].pool.TimeBasedFairness
		if !timeFairOn(tf) {
			continue
		}
		k := strength(tf)
		hist := c.snap.HistoricalUsage[c.pools[pool].pool.Name]
		for j := range c.projects {
			p := &c.projects[j]
			t := &p.timeFair[pool]
			t.used = pastUse(hist, p.name)
			c.depts[p.dept].timeFair[pool].used += t.used
			if c.home(int32(j)) == int32(pool) { // where it competes
				t.on, t.weight = true, timeWeight(p.shares[pool].quota.OverQuotaWeight, arenaWeight[p.arena], t.used, k)
			}
		}
		for a := range c.arenas {
			if ar := &c.arenas[a]; int(ar.pool) == pool {
				t := &c.depts[ar.dept].timeFair[pool]
				t.on, t.weight = true, timeWeight(c.depts[ar.dept].shares[pool].quota.OverQuotaWeight, deptWeight[pool], t.used, k)
			}
		}
	}
}

// reclaimKey is how far project k is above its fair share in the pool, for reclaim's choice
// of whom to take from first (S17): S11's key on what runs, or with S28 on in the pool, the
// key with P among the pool's borrowers.
func (c *cycle) reclaimKey(k, pool int32) fairKey {
	sh := &c.projects[k].shares[pool]
	tf := &c.pools[pool].pool.TimeBasedFairness
	if !timeFairOn(tf) {
		return makeFairKey(sh.running, sh.quota.Deserved, sh.quota.OverQuotaWeight)
	}
	if c.borrowerWeight == nil {
		c.borrowerWeight = make([]int64, len(c.pools))
		for i := range c.borrowerWeight {
			c.borrowerWeight[i] = -1
		}
	}
	if c.borrowerWeight[pool] < 0 {
		sum := int64(0)
		for _, b := range c.borrowersIn(pool) {
			sum += c.projects[b].shares[pool].quota.OverQuotaWeight
		}
		c.borrowerWeight[pool] = sum
	}
	used := pastUse(c.snap.HistoricalUsage[c.pools[pool].pool.Name], c.projects[k].name)
	t := timeShare{on: true, used: used,
		weight: timeWeight(sh.quota.OverQuotaWeight, c.borrowerWeight[pool], used, strength(tf))}
	return t.key(sh.running, sh.quota.Deserved)
}
