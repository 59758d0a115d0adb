package scheduler

import "testing"

// The examples of the seed documents (OSMO's priority, preemption and borrowing pages and
// Run:ai's non-preemptible rule), played through Arbiter. OSMO's levels map to the
// dictionary as HIGH = high, NORMAL = medium-high, both non-preemptible, and LOW = low,
// preemptible.

func osmoHigh(name string) *wlB   { return wl(name).prio("high").np() }
func osmoNormal(name string) *wlB { return wl(name).prio("medium-high").np() }
func osmoLow(name string) *wlB    { return wl(name).prio("low").preemptible() }

var (
	prioLow        = Priority{"low", 40}
	prioMediumHigh = Priority{"medium-high", 90}
)

func running(name, project string, p Priority, pre Preemptibility, gpus int64, borrowed bool) RunningWorkload {
	return RunningWorkload{Workload: "uid-" + name, Namespace: "ns", Name: name, Project: project, Priority: p,
		Preemptibility: pre, NodePool: "default", GPUs: gpus, Borrowed: borrowed}
}

// OSMO: WF1 and WF2 hold the two GPUs; WF3-WF6 queue by priority, then by submission.
func TestSeedOSMOQueueOrder(t *testing.T) {
	base := func() *snapB {
		return snap().node(node("n1").gpus(2)).project(project("osmo", 4))
	}
	queued := []*wlB{
		osmoLow("wf3").in("osmo").queued(3),
		osmoHigh("wf4").in("osmo").queued(4),
		osmoNormal("wf5").in("osmo").queued(5),
		osmoHigh("wf6").in("osmo").queued(6),
	}
	s := base().wl(osmoNormal("wf1").in("osmo").queued(1).on(1, "n1"), osmoNormal("wf2").in("osmo").queued(2).on(2, "n1")).wl(queued...)
	checkPlan(t, s.build().Plan(), Plan{Pending: []PendingWorkload{
		pend("wf4", "osmo", InsufficientCapacity, 1),
		pend("wf6", "osmo", InsufficientCapacity, 2),
		pend("wf5", "osmo", InsufficientCapacity, 3),
		pend("wf3", "osmo", InsufficientCapacity, 4),
	}})

	// WF1 finishes: the head of the queue, WF4, takes its GPU.
	s = base().wl(osmoNormal("wf2").in("osmo").queued(2).on(2, "n1")).wl(queued...)
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("wf4-0", "n1")},
		Pending: []PendingWorkload{
			pend("wf6", "osmo", InsufficientCapacity, 1),
			pend("wf5", "osmo", InsufficientCapacity, 2),
			pend("wf3", "osmo", InsufficientCapacity, 3),
		}})
}

// OSMO: WF5 (NORMAL) preempts the LOW WF1, which comes back ahead of WF3 and WF4 because it
// keeps its queue time.
func TestSeedOSMOPreemption(t *testing.T) {
	base := func() *snapB {
		return snap().node(node("n1").gpus(2)).project(project("osmo", 2)).wl(
			osmoNormal("wf2").in("osmo").queued(2).on(2, "n1"),
			osmoLow("wf3").in("osmo").queued(3),
			osmoLow("wf4").in("osmo").queued(4))
	}

	// Cycle 1: WF5 arrives; WF1 is evicted for it (S16) and WF5 waits on n1.
	s := base().wl(osmoLow("wf1").in("osmo").queued(1).on(1, "n1"), osmoNormal("wf5").in("osmo").queued(5))
	checkPlan(t, s.build().Plan(), Plan{
		Evictions: []Eviction{evict("wf1", "osmo", "wf5", RulePreemption, 1)},
		Pending: []PendingWorkload{
			pendOn("wf5", "osmo", 1, "n1"),
			pend("wf3", "osmo", InsufficientCapacity, 2),
			pend("wf4", "osmo", InsufficientCapacity, 3),
		},
		Running: []RunningWorkload{running("wf2", "osmo", prioMediumHigh, NonPreemptible, 1, false)},
	})

	// Cycle 2: WF1's pod is still terminating: WF5 waits and nothing else is evicted (S19).
	s = base().wl(osmoLow("wf1").in("osmo").queued(1).on(1, "n1").terminating("wf5"), osmoNormal("wf5").in("osmo").queued(5))
	checkPlan(t, s.build().Plan(), Plan{Pending: []PendingWorkload{
		pendOn("wf5", "osmo", 1, "n1"),
		pend("wf3", "osmo", InsufficientCapacity, 2),
		pend("wf4", "osmo", InsufficientCapacity, 3),
	}})

	// Cycle 3: WF1 is gone and its controller made a new pod; WF5 takes the GPU and WF1
	// queues ahead of WF3 and WF4.
	s = base().wl(osmoLow("wf1").in("osmo").queued(1), osmoNormal("wf5").in("osmo").queued(5).nominated())
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("wf5-0", "n1")},
		Pending: []PendingWorkload{
			pend("wf1", "osmo", InsufficientCapacity, 1),
			pend("wf3", "osmo", InsufficientCapacity, 2),
			pend("wf4", "osmo", InsufficientCapacity, 3),
		},
	})
}

// OSMO's pool1 and pool2 are two Arbiter projects sharing one node pool of 4 GPUs, 2 deserved each.
func TestSeedOSMOBorrowAndReclaim(t *testing.T) {
	base := func() *snapB {
		return snap().node(node("n1").gpus(4)).project(project("pool1", 2), project("pool2", 2)).wl(
			osmoNormal("wf1").in("pool1").queued(1).on(1, "n1"),
			osmoLow("wf2").in("pool1").queued(2).on(2, "n1"),
			osmoNormal("wf4").in("pool2").queued(4).on(4, "n1"))
	}

	// pool2 uses 1 of its 2 GPUs, so pool1 borrows the spare one for its LOW WF3.
	s := base().wl(osmoLow("wf3").in("pool1").queued(3))
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("wf3-0", "n1")},
		Running: []RunningWorkload{
			running("wf1", "pool1", prioMediumHigh, NonPreemptible, 1, false),
			running("wf2", "pool1", prioLow, Preemptible, 1, false),
			running("wf3", "pool1", prioLow, Preemptible, 1, true),
			running("wf4", "pool2", prioMediumHigh, NonPreemptible, 1, false),
		},
		Projects: []QueueStatus{
			{Name: "pool1", NodePool: "default", Deserved: 2, Limit: NoLimit, Allocated: 3, AllocatedNonPreemptible: 1, Borrowed: 1, RunningWorkloads: 3, FairShare: 3},
			{Name: "pool2", NodePool: "default", Deserved: 2, Limit: NoLimit, Allocated: 1, AllocatedNonPreemptible: 1, RunningWorkloads: 1, FairShare: 1},
		},
	})

	// WF5 (NORMAL) in pool2 is within pool2's quota: it reclaims the borrowed GPU from WF3 (S17).
	s = base().wl(osmoLow("wf3").in("pool1").queued(3).on(10, "n1"), osmoNormal("wf5").in("pool2").queued(11))
	checkPlan(t, s.build().Plan(), Plan{
		Evictions: []Eviction{evict("wf3", "pool1", "wf5", RuleReclaim, 1)},
		Pending:   []PendingWorkload{pendOn("wf5", "pool2", 1, "n1")},
	})

	// Had pool1 been within its quota, its LOW work would not be reclaimed: pool2 asking for
	// more than its quota waits.
	s = snap().node(node("n1").gpus(4)).project(project("pool1", 2), project("pool2", 2)).wl(
		osmoLow("wf1").in("pool1").queued(1).on(1, "n1"),
		osmoLow("wf2").in("pool1").queued(2).on(2, "n1"),
		osmoNormal("wf4").in("pool2").queued(4).on(4, "n1", "n1").pods(2),
		osmoLow("wf5").in("pool2").queued(5))
	checkPlan(t, s.build().Plan(), Plan{Pending: []PendingWorkload{pend("wf5", "pool2", InsufficientCapacity, 1)}})
}

// Run:ai: non-preemptible work runs only inside the deserved quota, even when GPUs are free;
// preemptible work may use them.
func TestSeedRunAINonPreemptibleWithinQuota(t *testing.T) {
	s := snap().node(node("n1").gpus(8)).project(project("team", 2)).wl(
		wl("ws1").typ("Workspace").in("team").queued(1).on(1, "n1"),
		wl("ws2").typ("Workspace").in("team").queued(2).on(2, "n1"),
		wl("ws3").typ("Workspace").in("team").queued(3),
		wl("train").in("team").queued(4))
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("train-0", "n1")},
		Pending: []PendingWorkload{{Workload: "uid-ws3", Namespace: "ns", Name: "ws3", Project: "team",
			Priority: Priority{"high", 125}, Preemptibility: NonPreemptible, Reason: NonPreemptibleOverQuota, QueuePosition: 1,
			RequestedGPUs: 1,
			Message: "You have reached the limit of non-preemptible resources: project team would use 3 GPUs of " +
				"non-preemptible work in pool default, deserved 2; submit it as preemptible or wait for other non-preemptible work to finish."}},
	})
}
