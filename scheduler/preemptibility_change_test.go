package scheduler

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// change is a running workload train of 4 GPUs (a minimum of 2) in pool p of project a
// (deserved 4, with nonPreemptible GPUs of other work) in department d (deserved 8, 2 used).
func change(from, to Preemptibility, nonPreemptible int64) PreemptibilityChange {
	return PreemptibilityChange{Workload: "train", From: from, To: to, Pool: "p", GPUs: 4, MinimumGPUs: 2,
		Project:    QuotaUse{Name: "a", Deserved: 4, NonPreemptible: nonPreemptible},
		Department: &QuotaUse{Name: "d", Deserved: 8, NonPreemptible: 2}}
}

func TestS14_ChangeWithinDeservedQuotaIsAllowed(t *testing.T) {
	for _, c := range []PreemptibilityChange{
		change(Preemptible, NonPreemptible, 0),  // 4 of 4
		change(Preemptible, SemiPreemptible, 2), // its minimum: 4 of 4
		change(SemiPreemptible, NonPreemptible, 2),
		change(NonPreemptible, Preemptible, 9),     // gives back: allowed even above the quota
		change(NonPreemptible, SemiPreemptible, 9), // likewise
		change(Preemptible, Preemptible, 9),
	} {
		if r := CheckPreemptibilityChange(c); r != nil {
			t.Errorf("%s -> %s with %d non-preemptible: refused: %s", c.From, c.To, c.Project.NonPreemptible, r.Message)
		}
	}
}

func TestS14_ChangeOntoBorrowedGPUsIsRefusedWithWhatWouldWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    PreemptibilityChange
		want ChangeRefusal
	}{
		{"non-preemptible beyond the project's quota; semi-preemptible fits", change(Preemptible, NonPreemptible, 1),
			ChangeRefusal{Unit: "project", Name: "a", Pool: "p", Would: 5, Deserved: 4,
				Message: "train runs on 4 GPUs in node pool p; making it non-preemptible would give project a 5 GPUs of non-preemptible work there, " +
					"beyond its deserved quota of 4, and work beyond the deserved quota must stay reclaimable (S14). Keep it preemptible, " +
					"make it semi-preemptible, as its minimum of 2 GPUs fits, change it once 1 GPU of project a's other non-preemptible work there has finished, " +
					"or ask an admin to raise project a's deserved quota in p to at least 5."}},
		{"nothing but the quota would make room", change(Preemptible, NonPreemptible, 3),
			ChangeRefusal{Unit: "project", Name: "a", Pool: "p", Would: 7, Deserved: 4,
				Message: "train runs on 4 GPUs in node pool p; making it non-preemptible would give project a 7 GPUs of non-preemptible work there, " +
					"beyond its deserved quota of 4, and work beyond the deserved quota must stay reclaimable (S14). Keep it preemptible, " +
					"change it once 3 GPUs of project a's other non-preemptible work there have finished, or ask an admin to raise project a's deserved quota in p to at least 7."}},
		{"the department's quota", func() PreemptibilityChange {
			c := change(Preemptible, NonPreemptible, 0)
			c.Department.NonPreemptible = 6
			return c
		}(), ChangeRefusal{Unit: "department", Name: "d", Pool: "p", Would: 10, Deserved: 8,
			Message: "train runs on 4 GPUs in node pool p; making it non-preemptible would give department d 10 GPUs of non-preemptible work there, " +
				"beyond its deserved quota of 8, and work beyond the deserved quota must stay reclaimable (S14). Keep it preemptible, " +
				"make it semi-preemptible, as its minimum of 2 GPUs fits, change it once 2 GPUs of department d's other non-preemptible work there have finished, " +
				"or ask an admin to raise department d's deserved quota in p to at least 10."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckPreemptibilityChange(tc.c)
			if got == nil {
				t.Fatal("allowed")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestS14_AProjectWithoutDepartmentIsBoundByItsOwnQuota(t *testing.T) {
	c := change(Preemptible, NonPreemptible, 0)
	c.Department = nil
	if r := CheckPreemptibilityChange(c); r != nil {
		t.Errorf("refused: %s", r.Message)
	}
	c.Project.NonPreemptible = 1
	if r := CheckPreemptibilityChange(c); r == nil || r.Unit != "project" {
		t.Errorf("refusal = %+v, want the project's", r)
	}
}

func TestS26_SemiPreemptibleCountsItsMinimum(t *testing.T) {
	// Its minimum of 2 would pass the quota by one: refused, without offering itself.
	r := CheckPreemptibilityChange(change(Preemptible, SemiPreemptible, 3))
	if r == nil || r.Would != 5 {
		t.Fatalf("refusal = %+v, want 5 non-preemptible GPUs", r)
	}
	want := "Keep it preemptible, change it once 1 GPU of project a's other non-preemptible work there has finished, or ask an admin to raise project a's deserved quota in p to at least 5."
	if got := r.Message[len(r.Message)-len(want):]; got != want {
		t.Errorf("what would work: %q, want %q", got, want)
	}
	// From semi-preemptible to non-preemptible adds the replicas beyond the minimum only.
	if r := CheckPreemptibilityChange(change(SemiPreemptible, NonPreemptible, 3)); r == nil || r.Would != 5 {
		t.Errorf("refusal = %+v, want 5 non-preemptible GPUs (3 + the 2 beyond the minimum)", r)
	}
}

func TestS26_MinimumGPUsAreTheFirstBoundPodsOfTheGang(t *testing.T) {
	pod := func(node string, gpus int64, terminating bool) Pod {
		return Pod{NodeName: node, Requests: Resources{GPUs: gpus}, Terminating: terminating}
	}
	w := &Workload{UID: "u", Kind: "Deployment", Group: "apps", Annotations: map[string]string{AnnotationMinMembers: "2"},
		Pods: []Pod{pod("", 1, false), pod("n1", 2, true), pod("n1", 2, false), pod("n2", 3, false), pod("n2", 4, false)}}
	if got := MinimumGPUs(w, nil); got != 5 {
		t.Errorf("MinimumGPUs = %d, want 5 (the first two bound pods that are not terminating)", got)
	}
}

// TestS14_StandingOfAWorkloadThePlanStarts: the plan that binds a workload's pods is the first
// to say it runs; its minimum counts the pods the plan binds, not only those the snapshot
// shows on nodes (a change checked right after it started saw a minimum of 0).
func TestS14_StandingOfAWorkloadThePlanStarts(t *testing.T) {
	plan := &Plan{
		Binds: []Bind{{Workload: "u", Pod: PodRef{UID: "p0"}, Node: "n"}, {Workload: "u", Pod: PodRef{UID: "p1"}, Node: "n"},
			{Workload: "u", Pod: PodRef{UID: "p2"}, Node: "n"}, {Workload: "u", Pod: PodRef{UID: "p3"}, Node: "n"}},
		Running: []RunningWorkload{{Workload: "u", Name: "borrower", Project: "a", NodePool: "p", GPUs: 4, Preemptibility: Preemptible}},
	}
	w := &Workload{UID: "u", Name: "borrower", Kind: "Job", Group: "batch", Annotations: map[string]string{AnnotationMinMembers: "2"}}
	for i := range 4 {
		w.Pods = append(w.Pods, Pod{UID: "p" + strconv.Itoa(i), Requests: Resources{GPUs: 1}})
	}
	got, ok := plan.PreemptibilityStanding(w, "")
	if !ok || got.MinimumGPUs != 2 {
		t.Errorf("standing (ok %v): minimum %d GPUs, want 2", ok, got.MinimumGPUs)
	}
}

func TestS14_StandingReadsThePlan(t *testing.T) {
	plan := &Plan{
		Running:     []RunningWorkload{{Workload: "u", Name: "train", Project: "a", NodePool: "p", GPUs: 4, Preemptibility: Preemptible}},
		Projects:    []QueueStatus{{Name: "a", NodePool: "q", Deserved: 9}, {Name: "a", NodePool: "p", Deserved: 4, AllocatedNonPreemptible: 1}},
		Departments: []QueueStatus{{Name: "d", NodePool: "p", Deserved: 8, AllocatedNonPreemptible: 2}},
	}
	w := &Workload{UID: "u", Name: "train", Kind: "Pod", Pods: []Pod{{NodeName: "n", Requests: Resources{GPUs: 4}}}}
	got, ok := plan.PreemptibilityStanding(w, "d")
	want := PreemptibilityChange{Workload: "train", From: Preemptible, Pool: "p", GPUs: 4, MinimumGPUs: 4,
		Project: QuotaUse{Name: "a", Deserved: 4, NonPreemptible: 1}, Department: &QuotaUse{Name: "d", Deserved: 8, NonPreemptible: 2}}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("standing (ok %v) (-want +got):\n%s", ok, diff)
	}
	if _, ok := plan.PreemptibilityStanding(&Workload{UID: "waiting"}, "d"); ok {
		t.Error("a workload that holds no GPUs has a standing")
	}
}
