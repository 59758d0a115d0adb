package scheduler

import "testing"

// S26: a semi-preemptible workload's minimum is non-preemptible, its replicas beyond it are
// preemptible, placed and evicted one by one.

func (b *wlB) semi() *wlB { b.w.Labels[LabelPreemptibility] = string(SemiPreemptible); return b }

// evictPods is an eviction of some of a semi-preemptible workload's replicas.
func evictPods(victim, project, preemptor string, rule Rule, pods ...string) Eviction {
	e := evict(victim, project, preemptor, rule, int64(len(pods)))
	for _, p := range pods {
		e.Pods = append(e.Pods, PodRef{UID: "uid-" + p, Namespace: "ns", Name: p})
	}
	return e
}

func TestS26_SemiPreemptible(t *testing.T) {
	elastic := func() *wlB { return wl("e").in("x").semi().pods(4).gang(2) }
	runRuleCases(t, []ruleCase{
		{"the minimum fits deserved quota, replicas beyond it borrow free GPUs",
			snap().gpuNodes("n", 1, 4).project(project("x", 2)).wl(elastic()),
			Plan{Binds: []Bind{bind("e-0", "n1"), bind("e-1", "n1"), bind("e-2", "n1"), bind("e-3", "n1")}}},
		{"non-preemptible, the same workload needs all four GPUs of quota",
			snap().gpuNodes("n", 1, 4).project(project("x", 2)).wl(wl("e").in("x").np().pods(4).gang(2)),
			Plan{Pending: []PendingWorkload{pend("e", "x", NonPreemptibleOverQuota, 1)}}},
		{"a minimum beyond deserved quota waits, and its replicas with it",
			snap().gpuNodes("n", 1, 4).project(project("x", 1)).wl(elastic()),
			Plan{Pending: []PendingWorkload{pend("e", "x", NonPreemptibleOverQuota, 1)}}},
		{"replicas go one by one while GPUs are free; the rest wait",
			snap().gpuNodes("n", 1, 3).project(project("x", 2)).wl(elastic()),
			Plan{Binds: []Bind{bind("e-0", "n1"), bind("e-1", "n1"), bind("e-2", "n1")},
				Pending: []PendingWorkload{pend("e", "x", InsufficientCapacity, 1)}}},
		{"a running minimum gets its missing replicas on free GPUs",
			snap().gpuNodes("n", 1, 4).project(project("x", 2)).wl(elastic().on(10, "n1", "n1")),
			Plan{Binds: []Bind{bind("e-2", "n1"), bind("e-3", "n1")}}},
		{"replicas beyond the minimum evict nobody",
			snap().gpuNodes("n", 1, 3).project(project("x", 2), project("y", 0)).
				wl(wl("b").in("y").on(10, "n1"), elastic().on(10, "n1", "n1")),
			Plan{Pending: []PendingWorkload{pend("e", "x", InsufficientCapacity, 1)}}},
		{"reclaim takes replicas one by one, never the minimum",
			snap().gpuNodes("n", 1, 4).project(project("owner", 2), project("x", 2)).
				wl(elastic().on(10, "n1", "n1", "n1", "n1"), wl("w").in("owner").pods(2).gang(2)),
			Plan{Evictions: []Eviction{evictPods("e", "x", "w", RuleReclaim, "e-3", "e-2")},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"reclaim leaves the minimum even when more is needed",
			snap().gpuNodes("n", 1, 4).project(project("owner", 3), project("x", 1)).
				wl(wl("e").in("x").semi().pods(4).gang(1).on(10, "n1", "n1", "n1", "n1"), wl("w").in("owner").pods(3).gang(3)),
			Plan{Evictions: []Eviction{evictPods("e", "x", "w", RuleReclaim, "e-3", "e-2", "e-1")},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"preemption takes a replica for higher-priority work of the project",
			snap().gpuNodes("n", 1, 4).project(project("x", 4)).
				wl(elastic().prio("low").on(10, "n1", "n1", "n1", "n1"), wl("h").in("x").prio("high").queued(5)),
			Plan{Evictions: []Eviction{evictPods("e", "x", "h", RulePreemption, "e-3")},
				Pending: []PendingWorkload{pendOn("h", "x", 1, "n1")}}},
		{"the minimum is never preempted",
			snap().gpuNodes("n", 1, 2).project(project("x", 2)).
				wl(elastic().prio("low").on(10, "n1", "n1"), wl("h").in("x").prio("high").preemptible().queued(5)),
			Plan{Pending: []PendingWorkload{pend("h", "x", InsufficientCapacity, 1), pend("e", "x", InsufficientCapacity, 2)}}},
	})
}

// The running report lists a semi-preemptible workload once, with all its GPUs, borrowed when
// replicas are beyond the deserved quota.
func TestS26_ReportedOnce(t *testing.T) {
	p := snap().gpuNodes("n", 1, 4).project(project("x", 2)).wl(wl("e").in("x").semi().pods(4).gang(2).on(10, "n1", "n1", "n1")).build().Plan()
	if len(p.Running) != 1 || p.Running[0].GPUs != 4 || !p.Running[0].Borrowed || p.Running[0].Preemptibility != SemiPreemptible {
		t.Fatalf("running: %+v; want e once, 4 GPUs, borrowed, semi-preemptible", p.Running)
	}
	if len(p.Binds) != 1 || p.Projects[0].AllocatedNonPreemptible != 2 || p.Projects[0].Allocated != 4 {
		t.Fatalf("binds %+v, project %+v: want e-3 bound, 2 of 4 GPUs non-preemptible", p.Binds, p.Projects[0])
	}
}
