package scheduler

import "testing"

// Pods a controller has yet to make (foreseen_pods.go), foreseen from a new Job's template
// until its PodsDue: the snapshot is at minute 60.
func TestS19_ForeseenPods(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"a gang with pods still to make is placed, not bound, and its room is not given to lower-priority work of its project",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61),
				wl("low").in("p").gpus(4).pods(2).queued(1)),
			Plan{Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1)), pend("low", "p", InsufficientCapacity, 2)}}},
		{"with none of its pods made yet, the same",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(0, 61),
				wl("low").in("p").gpus(4).pods(2).queued(1)),
			Plan{Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1)), pend("low", "p", InsufficientCapacity, 2)}}},
		{"it evicts no one for pods not made yet",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("running").in("p").gpus(4).on(1, "n1"),
				wl("urgent").in("p").prio("high").gpus(4).foreseen(0, 61)),
			Plan{Pending: []PendingWorkload{pend("urgent", "p", InsufficientCapacity, 1)}}},
		{"once its pods are made it evicts as any workload (S16)",
			snap().gpuNodes("n", 1, 4).project(project("p", 4)).wl(
				wl("running").in("p").gpus(4).on(1, "n1"),
				wl("urgent").in("p").prio("high").gpus(4)),
			Plan{
				Evictions: []Eviction{evict("running", "p", "urgent", RulePreemption, 4)},
				Pending:   []PendingWorkload{pendOn("urgent", "p", 1, "n1")},
			}},
		{"after PodsDue the pods not made do not count: it waits for them, and the room goes to others",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 60),
				wl("low").in("p").gpus(4).pods(2).queued(1)),
			Plan{
				Binds:   []Bind{bind("low-0", "n1"), bind("low-1", "n2")},
				Pending: []PendingWorkload{pend("gang", "p", GangIncomplete, 1)},
			}},
	})
}

// The sentence says its room is kept, and where; the start estimate counts its pods as made
// within the seconds ahead, so it starts at once.
func TestS19_ForeseenPodsMessageAndEstimate(t *testing.T) {
	s := snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
		wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61)).build()
	plan := s.Plan()
	if len(plan.Pending) != 1 || len(plan.Binds) != 0 {
		t.Fatalf("plan %+v: want the gang waiting, nothing bound", plan)
	}
	want := "Waiting for its controller to create its pods (2); room for them in node pool default is kept meanwhile, and they start once they all exist."
	if got := plan.Pending[0].Message; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	est := s.EstimateStarts(EstimateInput{First: &plan})
	if e := est["uid-gang"]; !e.At.Equal(s.Now) {
		t.Errorf("estimate %+v, want a start now (%v)", e, s.Now)
	}
	if got := s.Workloads[0].Pods[1]; !got.Foreseen || got.UID != "" {
		t.Errorf("the estimate changed the snapshot's pod: %+v", got)
	}
}

// awaiting marks a pending entry as placed but waiting for its controller to make its pods.
func awaiting(p PendingWorkload) PendingWorkload {
	p.AwaitingPods = true
	return p
}
