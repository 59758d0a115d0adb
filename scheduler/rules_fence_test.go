package scheduler

import "testing"

// Table tests of the rules added in the second round (S25-S27), named after them as in rules_test.go.

func TestS25_PriorityFencingAndOffsets(t *testing.T) {
	// two projects with nothing guaranteed compete for two GPUs: every GPU is surplus (S11's
	// second phase), where queue priority counts
	two := func(a, b *projB) *snapB {
		return snap().gpuNodes("n", 1, 2).project(a, b).wl(
			wl("a1").in("a").prio("very-high").queued(1), wl("a2").in("a").prio("very-high").queued(2),
			wl("b1").in("b").prio("low").queued(1), wl("b2").in("b").prio("low").queued(2))
	}
	aFirst := Plan{Binds: []Bind{bind("a1-0", "n1"), bind("a2-0", "n1")},
		Pending: []PendingWorkload{pend("b1", "b", InsufficientCapacity, 1), pend("b2", "b", InsufficientCapacity, 2)}}
	bFirst := Plan{Binds: []Bind{bind("b1-0", "n1"), bind("b2-0", "n1")},
		Pending: []PendingWorkload{pend("a1", "a", InsufficientCapacity, 1), pend("a2", "a", InsufficientCapacity, 2)}}
	shared := Plan{Binds: []Bind{bind("a1-0", "n1"), bind("b1-0", "n1")},
		Pending: []PendingWorkload{pend("a2", "a", InsufficientCapacity, 1), pend("b2", "b", InsufficientCapacity, 1)}}
	runRuleCases(t, []ruleCase{
		{"fenced everywhere: priority stops at the project, fairness shares",
			two(project("a", 0), project("b", 0)), shared},
		{"fence is the default spelled out", two(project("a", 0).prioPolicy(Fence, 0), project("b", 0).prioPolicy(Fence, 0)), shared},
		{"an open project's highest pending priority goes first",
			two(project("a", 0).prioPolicy(Open, 0), project("b", 0)), aFirst},
		{"a fenced project hides its very-high work from an open low sibling",
			two(project("a", 0), project("b", 0).prioPolicy(Open, 0)), bFirst},
		{"open siblings of equal queue priority are shared by weighted fairness",
			two(project("a", 0).prioPolicy(Open, -110), project("b", 0).prioPolicy(Open, 0)), shared},
		{"a fenced offset lifts a project above its siblings",
			two(project("a", 0), project("b", 0).prioPolicy(Fence, 10)), bFirst},
		{"a negative offset lowers an open project below a fenced one",
			two(project("a", 0).prioPolicy(Open, -1000), project("b", 0)), bFirst},
		{"deserved quota comes first whatever the priorities",
			// b is guaranteed one GPU: it gets it before open a's very-high work takes the rest
			two(project("a", 0).prioPolicy(Open, 0), project("b", 1)),
			Plan{Binds: []Bind{bind("b1-0", "n1"), bind("a1-0", "n1")},
				Pending: []PendingWorkload{pend("a2", "a", InsufficientCapacity, 1), pend("b2", "b", InsufficientCapacity, 1)}}},
		{"a fenced department hides its open project from other departments",
			snap().gpuNodes("n", 1, 2).dept("d1", 0, NoLimit).dept("d2", 0, NoLimit).deptPolicy("d2", Open, 0).
				project(project("a", 0).dept("d1").prioPolicy(Open, 0), project("b", 0).dept("d2").prioPolicy(Open, 0)).
				wl(wl("a1").in("a").prio("very-high").queued(1), wl("a2").in("a").prio("very-high").queued(2),
					wl("b1").in("b").prio("low").queued(1), wl("b2").in("b").prio("low").queued(2)),
			bFirst},
		{"an open department carries its projects' priority plus its offset",
			snap().gpuNodes("n", 1, 2).dept("d1", 0, NoLimit).dept("d2", 0, NoLimit).
				deptPolicy("d1", Open, 0).deptPolicy("d2", Open, 200).
				project(project("a", 0).dept("d1").prioPolicy(Open, 0), project("b", 0).dept("d2").prioPolicy(Open, 0)).
				wl(wl("a1").in("a").prio("very-high").queued(1), wl("a2").in("a").prio("very-high").queued(2),
					wl("b1").in("b").prio("low").queued(1), wl("b2").in("b").prio("low").queued(2)),
			bFirst},
	})
}
