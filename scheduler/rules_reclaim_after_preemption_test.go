package scheduler

import "testing"

// pendOnGPUs is pendOn for a workload of more than one GPU.
func pendOnGPUs(name, project string, pos int, gpus int64, nodes ...string) PendingWorkload {
	p := pendOn(name, project, pos, nodes...)
	p.NominatedGPUs = gpus
	return p
}

func TestS30_ReclaimAfterPreemption(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"inside its deserved quota once its project's lower-priority work is gone, it takes that work and borrowed work of other projects",
			snap().gpuNodes("n", 1, 3).project(project("p", 2), project("x", 0)).wl(
				wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			// S17 alone: p would use 3 of its 2; S16 alone frees 1 of the 2 it needs
			Plan{
				Evictions: []Eviction{evict("low", "p", "w", RulePreemption, 1), evict("x2", "x", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOnGPUs("w", "p", 1, 2, "n1")},
			}},
		{"inside its department's limit too: what its project's own work frees is not enough there",
			snap().gpuNodes("n", 1, 4).dept("d", 3, 3).
				project(project("p", 2).dept("d"), project("x", 1).dept("d")).wl(
				wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			// a GPU is free, but the department is at its limit: S16 alone leaves it at 4 of 3
			Plan{
				Evictions: []Eviction{evict("low", "p", "w", RulePreemption, 1), evict("x2", "x", "w", RuleReclaim, 1)},
				Pending:   []PendingWorkload{pendOnGPUs("w", "p", 1, 2, "n1")},
			}},
		{"its own victims stay evicted where keeping them would take it beyond its deserved quota",
			snap().gpuNodes("n", 1, 3).project(project("p", 2), project("x", 0)).wl(
				wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("x1").in("x").gpus(2).on(1, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			// low would fit beside w once x1 is gone, but p would then borrow what it took back
			Plan{
				Evictions: []Eviction{evict("low", "p", "w", RulePreemption, 1), evict("x1", "x", "w", RuleReclaim, 2)},
				Pending:   []PendingWorkload{pendOnGPUs("w", "p", 1, 2, "n1")},
			}},
		{"not when its project's other work is not of lower priority",
			snap().gpuNodes("n", 1, 3).project(project("p", 2), project("x", 0)).wl(
				wl("same").in("p").prio("high").on(1, "n1"),
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"in-quota work of other projects is never taken",
			snap().gpuNodes("n", 1, 3).project(project("p", 2), project("x", 2)).wl(
				wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"not for a workload bigger than its project's deserved quota",
			snap().gpuNodes("n", 1, 3).project(project("p", 1), project("x", 0)).wl(
				wl("low").in("p").prio("very-low").on(1, "n1"),
				wl("x1").in("x").on(1, "n1"), wl("x2").in("x").on(2, "n1"),
				wl("w").in("p").prio("high").gpus(2)),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
	})
}
