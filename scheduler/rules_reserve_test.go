package scheduler

import "testing"

// reserve adds a reservation an earlier plan made: the workload's pods, each asking for
// gpus GPUs (and a core and a gibibyte, as wl's pods do), on the nodes given.
func (b *snapB) reserve(name, project string, gpus int64, nodes ...string) *snapB {
	r := Reservation{Workload: "uid-" + name, Project: project}
	for _, n := range nodes {
		r.Pods = append(r.Pods, ReservedPod{Node: n, Requests: Resources{MilliCPU: 1000, Memory: gi, GPUs: gpus, Pods: 1}})
	}
	b.s.Reservations = append(b.s.Reservations, r)
	return b
}

// reservation is what a plan reserves: one pod of gpus GPUs on each node given.
func reservation(name, project string, gpus int64, nodes ...string) Reservation {
	var s snapB
	return s.reserve(name, project, gpus, nodes...).s.Reservations[0]
}

// TestS19_ReservationsHoldAcrossCycles: what a plan sets aside for a workload that cannot take
// it at once — a preemptor waiting for its victims, a resumed workload whose pods are being
// made — stays its own in later cycles, and the workload gets it back before its own attempt.
func TestS19_ReservationsHoldAcrossCycles(t *testing.T) {
	// One node of 4 GPUs: the victim v holds 2 (terminating, for w), 2 are free; w needs all 4.
	waitingForVictim := func() *snapB {
		return snap().gpuNodes("n", 1, 4).project(project("p", 4), project("q", 4)).wl(
			wl("v").in("p").gpus(2).on(1, "n1").terminating("w"),
			wl("w").in("p").prio("high").preemptible().gpus(4).queued(1),
			wl("x").in("q").gpus(2).queued(0))
	}
	runRuleCases(t, []ruleCase{
		{"without a reservation, the free part of a waiting preemptor's place goes to the next in line",
			waitingForVictim(),
			Plan{
				Binds:   []Bind{bind("x-0", "n1")},
				Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")},
			}},
		{"a preemptor waiting for its victims keeps the free part of its place",
			waitingForVictim().reserve("w", "p", 4, "n1"),
			Plan{Pending: []PendingWorkload{pendOn("w", "p", 1, "n1"), pend("x", "q", InsufficientCapacity, 1)}}},
		{"its victims gone, the nominated preemptor is placed on its reservation before anyone else",
			snap().gpuNodes("n", 1, 4).project(project("p", 4), project("q", 4)).wl(
				wl("w").in("p").prio("high").preemptible().gpus(4).queued(1).nominated(),
				wl("x").in("q").gpus(2).queued(0)).reserve("w", "p", 4, "n1"),
			Plan{
				Binds:   []Bind{bind("w-0", "n1")},
				Pending: []PendingWorkload{pend("x", "q", InsufficientCapacity, 1)},
			}},
		{"a resumed workload whose pods are not made yet keeps its place",
			snap().gpuNodes("n", 1, 4).project(project("p", 4), project("q", 4)).wl(
				wl("x").in("q").gpus(2).queued(0)).reserve("resumed", "p", 2, "n1", "n1"),
			Plan{Pending: []PendingWorkload{pend("x", "q", InsufficientCapacity, 1)}}},
		{"a reservation counts in its project's allocation (S13)",
			snap().gpuNodes("n", 2, 4).project(project("p", 2).limit(4)).wl(
				wl("x").in("p").gpus(2).queued(0)).reserve("resumed", "p", 2, "n1", "n1"),
			Plan{Pending: []PendingWorkload{pend("x", "p", OverLimit, 1)}}},
		{"a gang still being made keeps its place; it is nominated but not tried",
			snap().gpuNodes("n", 1, 4).project(project("p", 4), project("q", 4)).wl(
				wl("resumed").in("p").pods(2).gang(4).gpus(1).nominated(),
				wl("x").in("q").gpus(2).queued(0)).reserve("resumed", "p", 1, "n1", "n1", "n1", "n1"),
			Plan{Pending: []PendingWorkload{pend("resumed", "p", GangIncomplete, 1), pend("x", "q", InsufficientCapacity, 1)}}},
		{"a reservation of a workload that runs is over",
			snap().gpuNodes("n", 1, 4).project(project("p", 4), project("q", 4)).wl(
				wl("w").in("p").gpus(2).on(1, "n1"),
				wl("x").in("q").gpus(2).queued(0)).reserve("w", "p", 2, "n1"),
			Plan{Binds: []Bind{bind("x-0", "n1")}}},
		{"a plan reserves a preemptor's place behind its evictions",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("v").in("p").gpus(2).on(1, "n1"),
				wl("w").in("p").prio("high").preemptible().gpus(4).queued(1)),
			Plan{
				Evictions:    []Eviction{evict("v", "p", "w", RulePreemption, 2)},
				Pending:      []PendingWorkload{pendOn("w", "p", 1, "n1")},
				Reservations: []Reservation{reservation("w", "p", 4, "n1")},
			}},
		{"a plan reserves a resumed workload's place",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("job").kind("Job", "batch").in("p").suspended().pods(2).gang(2)),
			Plan{
				Resumes:      []Resume{resume("job", "p", 2)},
				Reservations: []Reservation{reservation("job", "p", 1, "n1", "n1")},
			}},
	})
}
