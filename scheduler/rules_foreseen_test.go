package scheduler

import (
	"slices"
	"testing"
)

// Pods a controller has yet to make (foreseen_pods.go), foreseen from a new Job's template
// until its PodsDue: the snapshot is at minute 60.
func TestS19_ForeseenPods(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"a gang with pods still to make keeps its room from lower-priority work of its project, which it would preempt",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61),
				wl("low").in("p").gpus(4).pods(2).queued(1)),
			Plan{Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1)), pend("low", "p", InsufficientCapacity, 2)}}},
		{"with none of its pods made yet, the same",
			snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(0, 61),
				wl("low").in("p").gpus(4).pods(2).queued(1)),
			Plan{Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1)), pend("low", "p", InsufficientCapacity, 2)}}},
		{"lower-priority work of its project may use what is free beyond its need",
			snap().gpuNodes("n", 3, 4).project(project("p", 12)).wl(
				wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61),
				wl("low").in("p").gpus(4).queued(1)),
			Plan{
				Binds:   []Bind{bind("low-0", "n1")},
				Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1))},
			}},
		{"inside its deserved quota, it keeps its room from another project's borrowing, which it would reclaim",
			snap().gpuNodes("n", 2, 4).project(project("p", 8), project("q", 0)).wl(
				wl("gang").in("p").gpus(4).pods(2).gang(2).foreseen(0, 61),
				wl("borrower").in("q").gpus(4).pods(2).queued(1)),
			Plan{Pending: []PendingWorkload{awaiting(pend("gang", "p", GangIncomplete, 1)), pend("borrower", "q", InsufficientCapacity, 1)}}},
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

// Work it could not evict (another project's, inside its own deserved quota) starts on the room:
// nothing thrashes, and the Job waits for the next room as it would have.
func TestS19_ForeseenPodsKeepNoRoomFromWorkTheyCouldNotEvict(t *testing.T) {
	s := snap().gpuNodes("n", 2, 4).project(project("p", 8), project("q", 8)).wl(
		wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61),
		wl("other").in("q").gpus(4).pods(2).queued(1)).build()
	plan := s.Plan()
	if got := boundWorkloads(plan); len(got) != 1 || got[0] != "uid-other" {
		t.Errorf("bound %v, want the other project's workload", got)
	}
	if len(plan.Evictions) != 0 {
		t.Errorf("evictions %+v", plan.Evictions)
	}
}

func boundWorkloads(p Plan) []string {
	var out []string
	for _, b := range p.Binds {
		if !slices.Contains(out, b.Workload) {
			out = append(out, b.Workload)
		}
	}
	return out
}

// The sentence says it waits for its pods, and where they fit; the start estimate counts its pods as made
// within the seconds ahead, so it starts at once.
func TestS19_ForeseenPodsMessageAndEstimate(t *testing.T) {
	s := snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
		wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61)).build()
	plan := s.Plan()
	if len(plan.Pending) != 1 || len(plan.Binds) != 0 {
		t.Fatalf("plan %+v: want the gang waiting, nothing bound", plan)
	}
	if got := plan.NodePools[0].AllocatedGPUs; got != 0 {
		t.Errorf("pool default counts %d GPUs allocated; nothing is bound", got)
	}
	want := "Waiting for its controller to create its pods (2); they fit in node pool default, where work it would preempt or reclaim does not start meanwhile."
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

// Work held back for it says what it waits for.
func TestS23_HeldBackForAWorkloadAwaitingItsPods(t *testing.T) {
	plan := snap().gpuNodes("n", 2, 4).project(project("p", 8)).wl(
		wl("gang").in("p").prio("high").gpus(4).pods(2).gang(2).foreseen(1, 61),
		wl("low").in("p").gpus(4).pods(2).queued(1)).build().Plan()
	want := "Held back in pool default for gang, which waits for its controller to create its pods there and would preempt it (higher priority in its project, S16); it starts once that one has started, or when more capacity is free."
	for _, p := range plan.Pending {
		if p.Name == "low" && p.Message != want {
			t.Errorf("message %q, want %q", p.Message, want)
		}
	}
}
