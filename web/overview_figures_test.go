package web

import (
	"fmt"
	"testing"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

func TestWaitingCountsPreemptedAndSuspendedWorkWithPending(t *testing.T) {
	got, _ := waitingFigures([]store.WaitingCount{
		{Phase: "Pending", Reason: "InsufficientCapacity", Project: "a", Count: 3},
		{Phase: "Preempted", Reason: "InsufficientCapacity", Project: "a", Count: 2},
		{Phase: "Suspended", Reason: "OverLimit", Project: "b", Count: 2},
	})
	if diff := cmp.Diff(views.WaitingCounts{Total: 7, Pending: 3, Preempted: 2, Suspended: 2}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if note := got.Note(); note != "3 pending, 2 preempted, 2 suspended" {
		t.Errorf("the tile's note is %q", note)
	}
	if note := (views.WaitingCounts{Total: 3, Pending: 3}).Note(); note != "" {
		t.Errorf("with only pending work the tile's note is %q, want none", note)
	}
}

func TestWaitingReasonsNameTheirProjectsMostWaitingFirst(t *testing.T) {
	_, got := waitingFigures([]store.WaitingCount{
		{Phase: "Pending", Reason: "InsufficientCapacity", Project: "beta", Count: 1},
		{Phase: "Pending", Reason: "InsufficientCapacity", Project: "alpha", Count: 1},
		{Phase: "Preempted", Reason: "InsufficientCapacity", Project: "gamma", Count: 1},
		{Phase: "Suspended", Reason: "InsufficientCapacity", Project: "gamma", Count: 2},
	})
	want := []views.WaitingReason{{Reason: "InsufficientCapacity", Count: 5,
		Projects: []views.ProjectCount{{Project: "gamma", Count: 3}, {Project: "alpha", Count: 1}, {Project: "beta", Count: 1}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWaitingReasonsMostCommonFirstThenByCode(t *testing.T) {
	_, got := waitingFigures([]store.WaitingCount{
		{Phase: "Pending", Reason: "OverLimit", Project: "a", Count: 1},
		{Phase: "Preempted", Reason: "", Project: "a", Count: 1},
		{Phase: "Pending", Reason: "InsufficientCapacity", Project: "a", Count: 2},
		{Phase: "Pending", Reason: "GangIncomplete", Project: "a", Count: 1},
	})
	var order []string
	for _, r := range got {
		order = append(order, fmt.Sprintf("%s %d", r.Reason, r.Count))
	}
	if diff := cmp.Diff([]string{"InsufficientCapacity 2", " 1", "GangIncomplete 1", "OverLimit 1"}, order); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWaitingReasonNamesAtMostFiveProjectsAndCountsTheRest(t *testing.T) {
	var counts []store.WaitingCount
	for i := range 8 {
		counts = append(counts, store.WaitingCount{Phase: "Pending", Reason: "InsufficientCapacity", Project: fmt.Sprintf("p%d", i), Count: 1})
	}
	_, got := waitingFigures(counts)
	if len(got) != 1 || got[0].Count != 8 || len(got[0].Projects) != reasonProjectsShown || got[0].MoreProjects != 3 {
		t.Errorf("8 projects waiting for one reason: %+v", got)
	}
}

func TestNothingWaitingIsNoReason(t *testing.T) {
	total, reasons := waitingFigures(nil)
	if diff := cmp.Diff(views.WaitingCounts{}, total); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(reasons) != 0 {
		t.Errorf("reasons without waiting work: %+v", reasons)
	}
}

func TestOverviewTilesSumThePoolsAndFreeIsNeverNegative(t *testing.T) {
	got := overviewFigures(overviewInput{Connected: true, Pools: []views.NodePool{
		{Name: "a", Status: views.NodePoolStatus{Nodes: 2, ReadyNodes: 1, GPUs: 8, AllocatedGPUs: 10}},
		{Name: "b", Status: views.NodePoolStatus{Nodes: 1, ReadyNodes: 1, GPUs: 4, AllocatedGPUs: 1}},
	}, Counts: store.WorkloadCounts{Phases: map[string]int{"Running": 4, "Pending": 9}, Events: map[string]int{"Preempted": 2, "Reclaimed": 1}}})
	want := views.OverviewLive{Connected: true, Nodes: 3, ReadyNodes: 2, GPUs: 12, AllocatedGPUs: 11, FreeGPUs: 1,
		Running: 4, Preemptions: 2, Reclaims: 1, Pools: got.Pools, WaitingReasons: []views.WaitingReason{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	over := overviewFigures(overviewInput{Pools: []views.NodePool{{Status: views.NodePoolStatus{GPUs: 2, AllocatedGPUs: 3}}}})
	if over.FreeGPUs != 0 {
		t.Errorf("3 of 2 GPUs allocated leaves %d free, want 0", over.FreeGPUs)
	}
}

func TestProjectBarSumsDeservedOverPoolsAndSaysHowFarOverQuota(t *testing.T) {
	got := overviewFigures(overviewInput{Projects: []views.Project{
		{Name: "alpha", Resources: []views.Quota{{GPU: views.QuotaGPU{Deserved: 4}}, {GPU: views.QuotaGPU{Deserved: 2}}},
			Status: views.OrgStatus{Usage: views.Usage{Allocated: 9, Borrowed: 3, AllocatedNonPreemptible: 2}}},
		{Name: "beta", Status: views.OrgStatus{Usage: views.Usage{Allocated: 1, Borrowed: 1}}},
		{Name: "gamma", Resources: []views.Quota{{GPU: views.QuotaGPU{Deserved: 4}}}, Status: views.OrgStatus{Usage: views.Usage{Allocated: 2}}},
		// 9 of 10 deserved in all, but one GPU beyond its share in one of its pools
		{Name: "delta", Resources: []views.Quota{{GPU: views.QuotaGPU{Deserved: 6}}, {GPU: views.QuotaGPU{Deserved: 4}}},
			Status: views.OrgStatus{Usage: views.Usage{Allocated: 9, Borrowed: 1}}},
	}}).Projects
	want := []views.ProjectBar{{Name: "alpha", Deserved: 6, Allocated: 9, Borrowed: 3, NonPreemptible: 2},
		{Name: "beta", Allocated: 1, Borrowed: 1}, {Name: "gamma", Deserved: 4, Allocated: 2},
		{Name: "delta", Deserved: 10, Allocated: 9, Borrowed: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var words []string
	for _, b := range got {
		words = append(words, b.QuotaWords())
	}
	if diff := cmp.Diff([]string{"over quota by 3 GPUs", "over quota by 1 GPU", "within quota",
		"borrows 1 GPU beyond its deserved quota in some node pools"}, words); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
