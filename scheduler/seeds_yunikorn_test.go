package scheduler

import "testing"

// YuniKorn's priority design (shared/seeds/004): tenant 1 is fenced and holds queue A
// (fenced) and queue B (open); tenant 2 is fenced and holds queues 1 and 2, both open; the
// system queue is open with a large offset. Arbiter's departments are the tenants, its
// projects the queues. Nothing is guaranteed, so every GPU is shared by queue priority (S25).
func TestSeedYuniKornPriorityFences(t *testing.T) {
	s := snap().gpuNodes("n", 1, 3).
		dept("system", 0, NoLimit).dept("tenant1", 0, NoLimit).dept("tenant2", 0, NoLimit).
		deptPolicy("system", Open, 1000).deptPolicy("tenant1", Fence, 0).deptPolicy("tenant2", Fence, 0).
		project(
			project("sys", 0).dept("system").prioPolicy(Open, 0),
			project("queue-a", 0).dept("tenant1").prioPolicy(Fence, 0),
			project("queue-b", 0).dept("tenant1").prioPolicy(Open, 0),
			project("queue-1", 0).dept("tenant2").prioPolicy(Open, 0),
			project("queue-2", 0).dept("tenant2").prioPolicy(Open, 0)).
		wl(
			// the system's very-low work still goes first: its offset lifts it above both tenants
			wl("sys-job").in("sys").prio("very-low").queued(9),
			// queue A's very-high work shows as the default priority behind its fence, so
			// queue B's low work goes before it
			wl("a-job").in("queue-a").prio("very-high").queued(1),
			wl("b-job").in("queue-b").prio("low").queued(2),
			// inside tenant 2 both queues are open: queue 2's high goes before queue 1's medium
			wl("q1-job").in("queue-1").prio("medium").queued(1),
			wl("q2-job").in("queue-2").prio("high").queued(2))
	// the tenants' own fences make them equal outside: fairness alternates between them
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("sys-job-0", "n1"), bind("b-job-0", "n1"), bind("q2-job-0", "n1")},
		Pending: []PendingWorkload{
			pend("q1-job", "queue-1", InsufficientCapacity, 1),
			pend("a-job", "queue-a", InsufficientCapacity, 1)},
	})

	// Everything fenced is Run:ai's behaviour: tenants and queues alternate by fairness and
	// the system's offset-free queue is just one more department.
	for i := range s.s.Departments {
		s.s.Departments[i].PriorityPolicy, s.s.Departments[i].PriorityOffset = Fence, 0
	}
	for i := range s.s.Projects {
		s.s.Projects[i].PriorityPolicy = Fence
	}
	checkPlan(t, s.build().Plan(), Plan{
		Binds: []Bind{bind("sys-job-0", "n1"), bind("a-job-0", "n1"), bind("q1-job-0", "n1")},
		Pending: []PendingWorkload{
			pend("q2-job", "queue-2", InsufficientCapacity, 1),
			pend("b-job", "queue-b", InsufficientCapacity, 1)},
	})
}
