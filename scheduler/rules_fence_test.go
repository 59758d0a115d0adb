package scheduler

import (
	"strings"
	"testing"
)

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

// pendingNote checks a waiting workload's reason and that its sentence says what S27 held back.
func pendingNote(t *testing.T, p Plan, name string, reason Reason, note string) {
	t.Helper()
	for _, pw := range p.Pending {
		if pw.Name == name {
			if pw.Reason != reason || !strings.Contains(pw.Message, note) {
				t.Errorf("%s waits with %s: %q; want %s saying %q", name, pw.Reason, pw.Message, reason, note)
			}
			return
		}
	}
	t.Errorf("%s does not wait", name)
}

func TestS27_ReclaimMinRuntime(t *testing.T) {
	// borrower x runs old (since minute 10) and young (since minute 55) on GPUs owner is
	// guaranteed; at minute 60 owner's w reclaims
	base := func(x *projB) *snapB {
		return snap().gpuNodes("n", 1, 2).project(project("owner", 2), x).wl(
			wl("old").in("x").on(10, "n1"), wl("young").in("x").on(55, "n1"), wl("w").in("owner"))
	}
	runRuleCases(t, []ruleCase{
		{"without the setting the lowest-ranked borrowed work goes", base(project("x", 0)),
			Plan{Evictions: []Eviction{evict("young", "x", "w", RuleReclaim, 1)},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"young borrowed work is spared, older borrowed work goes", base(project("x", 0).reclaimMinRuntime(600)),
			Plan{Evictions: []Eviction{evict("old", "x", "w", RuleReclaim, 1)},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"preemption's minimum runtime does not protect from reclaim", base(project("x", 0).minRuntime(3600)),
			Plan{Evictions: []Eviction{evict("young", "x", "w", RuleReclaim, 1)},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"all borrowed work too young: nothing is reclaimed", base(project("x", 0).reclaimMinRuntime(3600)),
			Plan{Pending: []PendingWorkload{heldUntil(pend("w", "owner", InsufficientCapacity, 1), 70,
				"the reclaim minimum runtime of the borrowed work it could reclaim")}}},
	})
	p := base(project("x", 0).reclaimMinRuntime(3600)).build().Plan()
	// old started at 08:10 and is the first to become eligible
	pendingNote(t, p, "w", InsufficientCapacity, "reclaim minimum runtime; reclaim is possible from 2025-11-01T09:10:00Z")
}

// A workload that could preempt only work younger than its project's minimum runtime says so,
// and from when, as one waiting on reclaim's minimum does (S27).
func TestS16_MinimumRuntimeSaysWhenPreemptionIsPossible(t *testing.T) {
	// at minute 30, the project's work started at minutes 20 and 25 and is spared 15 minutes:
	// the first may be preempted from minute 35
	p := snap().at(30).gpuNodes("n", 1, 2).project(project("p", 2).minRuntime(15*60)).wl(
		wl("young").in("p").on(20, "n1"), wl("younger").in("p").on(25, "n1").prio("very-low"),
		wl("w").in("p").prio("high").preemptible()).build().Plan()
	pendingNote(t, p, "w", InsufficientCapacity,
		"Lower-priority work of its project has run less than the project's minimum runtime; preemption is possible from 2025-11-01T08:35:00Z.")
	checkPlan(t, p, Plan{Pending: []PendingWorkload{heldUntil(pend("w", "p", InsufficientCapacity, 1), 35,
		"the minimum runtime of the work it could preempt")}})
	// work it could not preempt anyway (of its own priority) is not what it waits for
	p = snap().at(30).gpuNodes("n", 1, 2).project(project("p", 2).minRuntime(15*60)).wl(
		wl("young").in("p").prio("high").on(20, "n1"), wl("younger").in("p").prio("high").on(25, "n1"),
		wl("w").in("p").prio("high").preemptible()).build().Plan()
	for _, pw := range p.Pending {
		if strings.Contains(pw.Message, "minimum runtime") {
			t.Errorf("%s says %q, though nothing it could preempt is spared", pw.Name, pw.Message)
		}
	}
}

func TestS27_PreemptionDelay(t *testing.T) {
	// w, queued at minute 50, could reclaim borrowed b1 and preempt its project's low p1
	reclaimCase := func(owner *projB, now int) *snapB {
		return snap().gpuNodes("n", 1, 1).project(owner, project("x", 0)).at(now).wl(
			wl("b1").in("x").on(10, "n1"), wl("w").in("owner").queued(50))
	}
	preemptCase := func(p *projB, now int) *snapB {
		return snap().gpuNodes("n", 1, 1).project(p).at(now).wl(
			wl("p1").in("p").prio("very-low").on(10, "n1"), wl("w").in("p").prio("high").preemptible().queued(50))
	}
	runRuleCases(t, []ruleCase{
		{"reclaim waits out the delay", reclaimCase(project("owner", 1).preemptionDelay(900), 60),
			Plan{Pending: []PendingWorkload{heldUntil(pend("w", "owner", InsufficientCapacity, 1), 65, "its project's preemption delay")}}},
		{"reclaim once the delay has passed", reclaimCase(project("owner", 1).preemptionDelay(900), 65),
			Plan{Evictions: []Eviction{evict("b1", "x", "w", RuleReclaim, 1)},
				Pending: []PendingWorkload{pendOn("w", "owner", 1, "n1")}}},
		{"preemption waits out the delay", preemptCase(project("p", 1).preemptionDelay(900), 60),
			Plan{Pending: []PendingWorkload{heldUntil(pend("w", "p", InsufficientCapacity, 1), 65, "its project's preemption delay")}}},
		{"preemption once the delay has passed", preemptCase(project("p", 1).preemptionDelay(900), 65),
			Plan{Evictions: []Eviction{evict("p1", "p", "w", RulePreemption, 1)},
				Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")}}},
		{"no delay: preemption at once", preemptCase(project("p", 1), 51),
			Plan{Evictions: []Eviction{evict("p1", "p", "w", RulePreemption, 1)},
				Pending: []PendingWorkload{pendOn("w", "p", 1, "n1")}}},
	})
	p := reclaimCase(project("owner", 1).preemptionDelay(900), 60).build().Plan()
	pendingNote(t, p, "w", InsufficientCapacity, "preemption delay lets it preempt or reclaim from 2025-11-01T09:05:00Z")
}
