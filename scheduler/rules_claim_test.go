package scheduler

import "testing"

// heldMessage is the sentence of a workload refused where a waiting claimant would evict it.
func heldMessage(pool, claimant, why string) string {
	return "Held back in pool " + pool + " for " + claimant + ", which waits for capacity there and " + why +
		"; it starts once that one has started, or when more capacity is free."
}

// messageOf is the sentence of the plan's pending workload of that name.
func messageOf(p Plan, name string) string {
	for _, w := range p.Pending {
		if w.Name == name {
			return w.Message
		}
	}
	return ""
}

// TestS19_WhatAWaitingWorkloadWouldEvictIsNotPlacedWhereItWaits: work that a waiting workload
// may evict once it runs — lower-priority preemptible work of its project (S16), borrowed work
// of another project while it is inside its deserved quota (S17) — does not start on the
// capacity it waits for, only to be evicted a moment later. Other work still does.
func TestS19_WhatAWaitingWorkloadWouldEvictIsNotPlacedWhereItWaits(t *testing.T) {
	// One node of 4 GPUs. r (low, 2 GPUs) started a minute ago and the project's minimum
	// runtime of 10 minutes protects it; w (high, 4 GPUs as a gang) waits for it.
	waitsForYoungWork := func(more ...*wlB) *snapB {
		return snap().gpuNodes("n", 1, 4).project(project("p", 4).minRuntime(600)).wl(append([]*wlB{
			wl("r").in("p").preemptible().prio("low").gpus(2).on(59, "n1"),
			wl("w").in("p").preemptible().prio("high").pods(4).gang(4).queued(1),
		}, more...)...)
	}
	// One node of 4 GPUs. b borrows 2 (deserved 0) with work young enough for its reclaim
	// minimum runtime; a's w (4 GPUs) is inside a's deserved quota of 4 and waits for them.
	waitsForBorrowedGPUs := func(more ...*wlB) *snapB {
		return snap().gpuNodes("n", 1, 4).project(project("a", 4), project("b", 0).reclaimMinRuntime(600), project("c", 0)).wl(append([]*wlB{
			wl("r").in("b").preemptible().gpus(2).on(59, "n1"),
			wl("w").in("a").preemptible().pods(4).gang(4).queued(1),
		}, more...)...)
	}
	runRuleCases(t, []ruleCase{
		{"S16: lower-priority preemptible work of its project is held back",
			waitsForYoungWork(wl("v").in("p").preemptible().prio("low").gpus(2).queued(2)),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1), pend("v", "p", InsufficientCapacity, 2)}}},
		{"S16: work of higher priority than the claimant still starts",
			waitsForYoungWork(wl("u").in("p").preemptible().prio("very-high").gpus(2).queued(2)),
			Plan{Binds: []Bind{bind("u-0", "n1")}, Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"S17: another project may not borrow what in-quota waiting work claims",
			waitsForBorrowedGPUs(wl("x").in("c").preemptible().gpus(2).queued(0)),
			Plan{Pending: []PendingWorkload{pend("w", "a", InsufficientCapacity, 1), pend("x", "c", InsufficientCapacity, 1)}}},
		{"S17: what the claims leave free may be borrowed, not what they need",
			// three nodes of 4 GPUs, b borrows 2 on each: 6 free, but not 4 on one node for w,
			// which claims 4; x, one by one, borrows 2 and is held back for the next 2
			snap().gpuNodes("n", 3, 4).project(project("a", 4), project("b", 0).reclaimMinRuntime(600), project("c", 0)).wl(
				wl("r").in("b").preemptible().pods(3).gpus(2).on(59, "n1", "n2", "n3"),
				wl("w").in("a").preemptible().gpus(4).queued(1),
				wl("x").in("c").preemptible().pods(2).gang(1).gpus(2).queued(0)),
			Plan{Binds: []Bind{bind("x-0", "n1")},
				Pending: []PendingWorkload{pend("w", "a", InsufficientCapacity, 1), pend("x", "c", InsufficientCapacity, 1)}}},
		{"S17: work inside its own deserved quota is never held back",
			snap().gpuNodes("n", 1, 4).project(project("a", 4), project("b", 0).reclaimMinRuntime(600), project("c", 2)).wl(
				wl("r").in("b").preemptible().gpus(2).on(59, "n1"),
				wl("w").in("a").preemptible().pods(4).gang(4).queued(1),
				wl("x").in("c").preemptible().gpus(2).queued(0)),
			Plan{Binds: []Bind{bind("x-0", "n1")}, Pending: []PendingWorkload{pend("w", "a", InsufficientCapacity, 1)}}},
	})
}

// TestS19_AWorkloadEvictedIsNotPlacedInTheSameCycle: a workload of pods placed one by one,
// running one and waiting with another, is evicted for higher-priority work; its waiting pod
// is not placed in that cycle, nor while its eviction is under way, where it would keep the
// workload running and its preemptor waiting for it for ever; and a workload some of whose
// pods a cycle places is not evicted by it.
func TestS19_AWorkloadEvictedIsNotPlacedInTheSameCycle(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"its waiting pod waits",
			snap().node(node("n1").gpus(2), node("n2").gpus(1)).project(project("p", 3)).wl(
				wl("v").in("p").preemptible().prio("low").pods(2).gang(1).on(1, "n1"),
				wl("w").in("p").preemptible().prio("high").gpus(2).queued(1)),
			Plan{
				Evictions: []Eviction{evict("v", "p", "w", RulePreemption, 1)},
				Pending:   []PendingWorkload{pendOn("w", "p", 1, "n1"), pend("v", "p", InsufficientCapacity, 2)},
			}},
		{"and waits, evicting nothing, while its eviction is under way",
			snap().node(node("n1").gpus(2), node("n2").gpus(1)).project(project("p", 3)).wl(
				wl("v").in("p").preemptible().prio("high").pods(2).gang(1).on(1, "n1").terminating("w"),
				wl("w").in("p").preemptible().prio("very-high").gpus(2).queued(1),
				wl("x").in("p").preemptible().prio("low").on(1, "n2")),
			Plan{Pending: []PendingWorkload{pendOn("w", "p", 1, "n1"), pend("v", "p", InsufficientCapacity, 2)}}},
		{"a workload the cycle placed pods of is not its victim",
			// v, nominated (its victims gone), runs one pod on n1 and gets its second placed
			// on n2 first; w, inside q's deserved quota, could reclaim v's borrowed GPUs on n1
			// but may not in the same cycle, which would leave v's new pod running
			snap().gpuNodes("n", 2, 2).project(project("p", 0), project("q", 2)).wl(
				wl("v").in("p").preemptible().pods(2).gang(1).gpus(2).on(1, "n1").nominated(),
				wl("w").in("q").preemptible().gpus(2).queued(1)),
			Plan{Binds: []Bind{bind("v-1", "n2")}, Pending: []PendingWorkload{pend("w", "q", InsufficientCapacity, 1)}}},
	})
}

// TestS19_AHeldBackWorkloadSaysForWhom: the sentence names the claimant and the rule under
// which it would evict the workload held back.
func TestS19_AHeldBackWorkloadSaysForWhom(t *testing.T) {
	s := snap().gpuNodes("n", 1, 4).project(project("p", 4).minRuntime(600)).wl(
		wl("r").in("p").preemptible().prio("low").gpus(2).on(59, "n1"),
		wl("w").in("p").preemptible().prio("high").pods(4).gang(4).queued(1),
		wl("v").in("p").preemptible().prio("low").gpus(2).queued(2)).build()
	if got, want := messageOf(s.Plan(), "v"), heldMessage("default", "w", "would preempt it (higher priority in its project, S16)"); got != want {
		t.Errorf("v's sentence:\n got %q\nwant %q", got, want)
	}
	s = snap().gpuNodes("n", 1, 4).project(project("a", 4), project("b", 0).reclaimMinRuntime(600), project("c", 0)).wl(
		wl("r").in("b").preemptible().gpus(2).on(59, "n1"),
		wl("w").in("a").preemptible().pods(4).gang(4).queued(1),
		wl("x").in("c").preemptible().gpus(2).queued(0)).build()
	if got, want := messageOf(s.Plan(), "x"), heldMessage("default", "w", "would reclaim it (inside its deserved quota, S17)"); got != want {
		t.Errorf("x's sentence:\n got %q\nwant %q", got, want)
	}
}

// TestS19_WorkThatStartedWhileItsPreemptorWaitedIsNotItsVictim: a workload admitted on
// capacity a waiting workload could not use then is not evicted for it once more capacity
// frees up (S16 and S17 alike); work that ran before it began to wait still is.
func TestS19_WorkThatStartedWhileItsPreemptorWaitedIsNotItsVictim(t *testing.T) {
	waiting := func(b *wlB, m int) *wlB { b.w.WaitingSince = minute(m); return b }
	runRuleCases(t, []ruleCase{
		{"S16: started after it began to wait",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("v").in("p").preemptible().prio("low").gpus(2).on(30, "n1"),
				waiting(wl("w").in("p").preemptible().prio("high").gpus(2).queued(20), 20)),
			Plan{Pending: []PendingWorkload{pend("w", "p", InsufficientCapacity, 1)}}},
		{"S16: started before",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("v").in("p").preemptible().prio("low").gpus(2).on(10, "n1"),
				waiting(wl("w").in("p").preemptible().prio("high").gpus(2).queued(20), 20)),
			Plan{Evictions: []Eviction{evict("v", "p", "w", RulePreemption, 2)}, Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")}}},
		{"S17: borrowed work that started after it began to wait",
			snap().gpuNodes("n", 1, 2).project(project("a", 2), project("b", 0)).wl(
				wl("v").in("b").preemptible().gpus(2).on(30, "n1"),
				waiting(wl("w").in("a").preemptible().gpus(2).queued(20), 20)),
			Plan{Pending: []PendingWorkload{pend("w", "a", InsufficientCapacity, 1)}}},
		{"S17: borrowed work that started before",
			snap().gpuNodes("n", 1, 2).project(project("a", 2), project("b", 0)).wl(
				wl("v").in("b").preemptible().gpus(2).on(10, "n1"),
				waiting(wl("w").in("a").preemptible().gpus(2).queued(20), 20)),
			Plan{Evictions: []Eviction{evict("v", "b", "w", RuleReclaim, 2)}, Pending: []PendingWorkload{pendOn("w", "a", 1, "n1")}}},
	})
}
