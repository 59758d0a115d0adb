package scheduler

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The dry run (Snapshot.Foresee) must say what the cycle does with a new workload: the cases
// are named after the rule that decides them.

type foreseeCase struct {
	name string
	snap *snapB
	w    *wlB
	want Prediction
}

func runForeseeCases(t *testing.T, cases []foreseeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap.build()
			before := deepCopySnapshot(s)
			got := s.Foresee(tc.w.build())
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Prediction{}, "Message", "Start")); d != "" {
				t.Errorf("prediction (-want +got):\n%s", d)
			}
			if got.Outcome == Wait && got.Message == "" {
				t.Errorf("a waiting prediction must say why; got no message")
			}
			if d := cmpSnapshots(before, s); d != "" {
				t.Errorf("Foresee modified the snapshot (-before +after):\n%s", d)
			}
		})
	}
}

func cmpSnapshots(before Snapshot, after *Snapshot) string {
	return cmp.Diff(before, *after, cmpopts.EquateEmpty())
}

// deepCopySnapshot copies the workloads and their pods, which is what Foresee could modify.
func deepCopySnapshot(s *Snapshot) Snapshot {
	c := *s
	c.Workloads = make([]Workload, len(s.Workloads))
	for i, w := range s.Workloads {
		w.Pods = append([]Pod(nil), w.Pods...)
		c.Workloads[i] = w
	}
	return c
}

var (
	low      = Priority{"low", 40}
	veryLow  = Priority{"very-low", 25}
	high     = Priority{"high", 125}
	medium   = Priority{"medium", 80}
	prioHigh = "high"
)

func TestForesee_FreeCapacity(t *testing.T) {
	runForeseeCases(t, []foreseeCase{
		{"S18 free capacity first: starts now on the binpacked node",
			snap().gpuNodes("n", 2, 4).project(project("p", 4)).wl(wl("r").in("p").gpus(3).on(1, "n2")),
			wl("w").in("p").gpus(1),
			Prediction{Outcome: StartNow, NodePool: "default", Nodes: []string{"n2"}, Priority: low, Preemptibility: Preemptible}},
		{"S21 the project's pools in order: the first with room",
			snap().pool("a100", "gpu", "a100", Binpack).node(node("big").gpus(2).label("gpu", "a100"), node("small").gpus(2)).
				project(project("p", 4).pools("a100", "default")).wl(wl("r").in("p").gpus(2).on(1, "big")),
			wl("w").in("p").gpus(2),
			Prediction{Outcome: StartNow, NodePool: "default", Nodes: []string{"small"}, Priority: low, Preemptibility: Preemptible}},
		{"S5 a gang starts whole",
			snap().gpuNodes("n", 2, 2).project(project("p", 4)),
			wl("w").in("p").pods(2).gang(2).gpus(2),
			Prediction{Outcome: StartNow, NodePool: "default", Nodes: []string{"n1", "n2"}, Priority: low, Preemptibility: Preemptible}},
	})
}

func TestForesee_S16_PreemptionInsideProject(t *testing.T) {
	runForeseeCases(t, []foreseeCase{
		{"lowest priority of its own project goes",
			snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(
				wl("medium").in("p").prio("medium").on(1, "n1"),
				wl("verylow").in("p").prio("very-low").on(2, "n1")),
			wl("w").in("p").prio(prioHigh).preemptible(),
			Prediction{Outcome: StartAfterPreemption, NodePool: "default", Nodes: []string{"n1"}, QueuePosition: 1,
				Reason: WaitingForEvictions, Priority: high, Preemptibility: Preemptible, PodsPending: 1,
				Victims: []Victim{{WorkloadID: "uid-verylow", Namespace: "ns", Name: "verylow", Project: "p",
					Priority: veryLow, Rule: RulePreemption, GPUs: 1}}}},
		{"equal priority is never preempted: it waits",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("same").in("p").prio("high").on(1, "n1")),
			wl("w").in("p").prio(prioHigh).preemptible(),
			Prediction{Outcome: Wait, QueuePosition: 1, Reason: InsufficientCapacity, Priority: high, Preemptibility: Preemptible, PodsPending: 1}},
	})
}

func TestForesee_S17_ReclaimOfBorrowedGPUs(t *testing.T) {
	runForeseeCases(t, []foreseeCase{
		{"in-quota work takes back what another project borrows, whatever its priority",
			snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 1)).wl(
				wl("x1").in("x").prio("very-high").np().on(1, "n1"),
				wl("x2").in("x").prio("medium").preemptible().on(2, "n1")),
			wl("w").in("owner").prio("very-low"),
			Prediction{Outcome: StartAfterReclaim, NodePool: "default", Nodes: []string{"n1"}, QueuePosition: 1,
				Reason: WaitingForEvictions, Priority: veryLow, Preemptibility: Preemptible, PodsPending: 1,
				Victims: []Victim{{WorkloadID: "uid-x2", Namespace: "ns", Name: "x2", Project: "x",
					Priority: medium, Rule: RuleReclaim, GPUs: 1}}}},
		{"over its deserved quota it reclaims nothing and waits",
			snap().gpuNodes("n", 1, 2).project(project("owner", 1), project("x", 1)).wl(
				wl("o1").in("owner").on(1, "n1"), wl("x1").in("x").on(1, "n1")),
			wl("w").in("owner"),
			Prediction{Outcome: Wait, QueuePosition: 1, Reason: InsufficientCapacity, Priority: low, Preemptibility: Preemptible, PodsPending: 1}},
	})
}

func TestForesee_S23_WaitingWithReason(t *testing.T) {
	runForeseeCases(t, []foreseeCase{
		{"S10 behind a higher priority of its project, second in the queue",
			snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(
				wl("r").in("p").prio("very-high").np().on(1, "n1"),
				wl("first").in("p").prio("high").queued(1)),
			wl("w").in("p").prio("medium").queued(2),
			Prediction{Outcome: Wait, QueuePosition: 2, Reason: InsufficientCapacity, Priority: medium, Preemptibility: Preemptible, PodsPending: 1}},
		{"S13 over the project's limit",
			snap().gpuNodes("n", 1, 8).project(project("p", 1).limit(2)),
			wl("w").in("p").gpus(3),
			Prediction{Outcome: Wait, QueuePosition: 1, Reason: OverLimit, Priority: low, Preemptibility: Preemptible, PodsPending: 1}},
		{"S14 non-preemptible beyond deserved",
			snap().gpuNodes("n", 1, 8).project(project("p", 1)),
			wl("w").in("p").np().gpus(2),
			Prediction{Outcome: Wait, QueuePosition: 1, Reason: NonPreemptibleOverQuota, Priority: low, Preemptibility: NonPreemptible, PodsPending: 1}},
		{"S6 no project",
			snap().gpuNodes("n", 1, 8).project(project("p", 1)),
			wl("w"),
			Prediction{Outcome: Wait, Reason: NoProject, Priority: low, Preemptibility: Preemptible, PodsPending: 1}},
		{"S21 no node can ever host it",
			snap().gpuNodes("n", 1, 2).project(project("p", 8)),
			wl("w").in("p").gpus(4),
			Prediction{Outcome: Wait, QueuePosition: 1, Reason: NoMatchingNodes, Priority: low, Preemptibility: Preemptible, PodsPending: 1}},
	})
}

// What waits already keeps its turn: a dry run does not jump the queue the cycle keeps.
func TestForesee_DoesNotChangeOtherDecisions(t *testing.T) {
	s := snap().gpuNodes("n", 1, 2).project(project("p", 2)).wl(wl("a").in("p").queued(1)).build()
	alone := s.Plan()
	got := s.Foresee(wl("w").in("p").queued(2).gpus(2).build())
	if got.Outcome != Wait || got.QueuePosition != 1 {
		t.Errorf("w should wait first in line behind a, which takes a GPU: got %+v", got)
	}
	if again := s.Plan(); !reflect.DeepEqual(alone, again) {
		t.Errorf("the plan of the snapshot changed after a dry run")
	}
}

// A dry run's waiting outcome is told in time by the start estimate: here, when the running
// workload's deadline frees the GPU.
func TestForeseeStart_AtTheDeadline(t *testing.T) {
	s := snap().gpuNodes("n", 1, 1).project(project("p", 1)).wl(wl("r").in("p").on(10, "n1").deadline(90)).build()
	before := deepCopySnapshot(s)
	e := s.ForeseeStart(wl("w").in("p").queued(60).build(), EstimateInput{})
	if !e.At.Equal(minute(90)) || !strings.Contains(e.Basis, "ns/r at its activeDeadlineSeconds") {
		t.Errorf("estimate %+v, want minute 90 from r's deadline", e)
	}
	if d := cmpSnapshots(before, s); d != "" {
		t.Errorf("ForeseeStart modified the snapshot:\n%s", d)
	}
}
