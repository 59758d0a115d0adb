package scheduler

import (
	"slices"
	"strconv"
	"time"
)

// This file is about pods a controller has yet to make (S5 and S19 over time). A Job's
// controller makes its pods after the Job, a few at a time; until the last one exists its gang
// is incomplete, and a cycle that saw only what exists let lower-priority work of its project
// start on the room the gang needed, to be preempted for it moments later (the demo's second
// second: a low-priority Job admitted, then evicted 65 ms later for an 8-GPU gang created in
// the same second). Kueue does not have this gap, since it admits the Job's Workload before any
// pod; KAI does, since it groups pods.
//
// So for ForeseenPodsFor after the creation of a Job of several pods, or a JobSet, whose Jobs'
// controller makes them (scheduler/kube says which) the cache adds the pods its templates will
// still make (Pod.Foreseen, Workload.PodsDue), and a cycle counts them: the gang is complete,
// and the workload waits in its queue, in its turn, for its pods (awaitPods):
//   - nothing of it is placed, bound or evicted for it: pods that do not exist may never come
//     (S19), and placing it would keep its room from everyone for the seconds its controller
//     takes (the scenario benchmark's usage fell by points when it did);
//   - where it would fit now, what it needs there is kept from the work it could evict once its
//     pods exist: lower-priority preemptible work of its project (S16), which may still use
//     what is free beyond its need, and, inside its deserved quota, other projects' borrowing
//     (S17, the in-quota claim of claim.go). Other work may start there: it cannot be evicted
//     for it, so nothing thrashes, and the Job waits for the next room as it would have;
//   - where it would not fit, it claims as any waiting workload does (claim.go);
//   - its reason says it waits for its pods (GangIncomplete, where it fits);
//   - after PodsDue its foreseen pods are not counted, and it waits for its pods as before (a
//     namespace quota that forbids them, a controller that is down).
//
// Nothing is kept between cycles: each cycle decides afresh while the pods are foreseen.

// ForeseenPodsFor is how long after a Job's creation the pods its controller has yet to make
// are foreseen. A Job controller makes a gang's pods within a second or two even when busy
// (2.6 s at most in the benchmarks' busiest runs).
const ForeseenPodsFor = 30 * time.Second

// foreseesPods reports whether the workload's foreseen pods count at now.
func foreseesPods(w *Workload, now time.Time) bool {
	return !w.PodsDue.IsZero() && now.Before(w.PodsDue)
}

// awaitsPods reports whether some of a workload's pods are foreseen in this cycle.
func (c *cycle) awaitsPods(ws *wlState) bool {
	return ws.pend >= 0 && c.pend[ws.pend].foreseen
}

// awaitPods is the attempt of a workload some of whose pods are foreseen: nothing of it is
// placed or evicted. Where it would fit now (its project's pools in order, as placed) it keeps
// what it needs there from the lower-priority work of its project (S16) and, inside its
// deserved quota, from other projects' borrowing (S17); where it does not, it claims as any
// waiting workload does (claim.go).
func (c *cycle) awaitPods(wi int32, unit []int32) {
	ws := &c.wls[wi]
	f := failure{pool: -1}
	fit := int32(-1)
	mark := c.st.mark()
	for _, pool := range c.projects[ws.project].pools {
		if c.placeIn(wi, unit, pool, &f) {
			fit = pool
			break
		}
	}
	c.st.rollback(mark)
	gpus := c.unitGPUs(unit)
	switch {
	case fit < 0:
		if f.reason == "" {
			f.reason = NoMatchingNodes // the project may use no node pool at all
		}
		if f.reason == InsufficientCapacity || f.reason == TopologyUnsatisfiable {
			c.claimPools(wi, unit)
		}
	default:
		f = failure{reason: GangIncomplete, pool: fit, amount: int64(c.pend[ws.pend].gang), held: true}
		if gpus > 0 {
			pc := c.poolClaimsOf(fit)
			if pc.foreseen == nil {
				pc.foreseen = map[int32][]foreseenClaim{}
			}
			pc.foreseen[ws.project] = append(pc.foreseen[ws.project], foreseenClaim{wi: wi, gpus: gpus})
			c.claimInQuota(wi, unit, gpus)
		}
	}
	*c.failOf(ws) = f
}

// foreseenClaim is what a workload waiting for its pods keeps in a pool.
type foreseenClaim struct {
	wi   int32
	gpus int64
}

// foreseenClaimant is a higher-priority workload of wi's project waiting for its pods in the
// pool, whose GPUs placing gpus of wi there would leave short, or -1.
func (c *cycle) foreseenClaimant(wi, pool int32, gpus int64, pc *poolClaims) int32 {
	ws := &c.wls[wi]
	by, need := int32(-1), int64(0)
	for _, cl := range pc.foreseen[ws.project] {
		if w := &c.wls[cl.wi]; w.outcome == waiting && ws.prio < w.prio {
			if by < 0 {
				by = cl.wi
			}
			need += cl.gpus
		}
	}
	if by < 0 || c.pools[pool].freeGPUs-gpus >= need {
		return -1
	}
	return by
}

// withForeseenPodsMade is the workload as it will be once its controller has made the pods
// foreseen at now, each named after its workload; pods foreseen no longer are left out. The
// start estimate simulates the seconds ahead with it. w is not modified.
func withForeseenPodsMade(w Workload, now time.Time) Workload {
	if w.PodsDue.IsZero() {
		return w
	}
	keep := foreseesPods(&w, now)
	pods := make([]Pod, 0, len(w.Pods))
	for i, p := range w.Pods {
		if p.Foreseen {
			if !keep {
				continue
			}
			p.Foreseen = false
			p.UID, p.Name = w.UID+"-foreseen-"+strconv.Itoa(i), w.Name+"-foreseen-"+strconv.Itoa(i)
		}
		pods = append(pods, p)
	}
	w.Pods, w.PodsDue = slices.Clip(pods), time.Time{}
	return w
}
