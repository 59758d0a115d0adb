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
// So for ForeseenPodsFor after a Job's creation the cache adds the pods its template will
// still make (Pod.Foreseen, Workload.PodsDue), and a cycle treats them as pending pods:
//   - the gang is complete and is placed whole, in its turn, and what it is placed on is used
//     for the rest of the cycle, so lower-priority work of its project does not start there;
//   - nothing of it is bound until every pod exists (a gang is bound whole, S21), and its
//     reason says it waits for its pods, with its room kept (GangIncomplete);
//   - it evicts no one for pods that may never come (S19): where it does not fit it claims,
//     as any waiting workload does (claim.go), and evicts once its pods exist;
//   - after PodsDue its foreseen pods are not counted, and the workload waits for its pods as
//     before (a namespace quota that forbids them, a controller that is down).
//
// Nothing is kept between cycles: each cycle places the workload afresh while its pods are
// foreseen, in its order, as it would place it once they exist.

// ForeseenPodsFor is how long after a Job's creation the pods its controller has yet to make
// are foreseen. A Job controller makes a gang's pods within a second or two even when busy
// (2.6 s at most in the benchmarks' busiest runs).
const ForeseenPodsFor = 30 * time.Second

// foreseesPods reports whether the workload's foreseen pods count at now.
func foreseesPods(w *Workload, now time.Time) bool {
	return !w.PodsDue.IsZero() && now.Before(w.PodsDue)
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
