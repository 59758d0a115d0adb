package server

import (
	"testing"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/views"
)

func TestLiveStatus(t *testing.T) {
	// The node pools' figures are the plan's (the node→pool rule: scheduler's TestNodePoolStatus).
	plan := &scheduler.Plan{
		NodePools: []scheduler.NodePoolStatus{
			{Name: "a100", Nodes: 2, ReadyNodes: 1, GPUs: 16, AllocatedGPUs: 5},
			{Name: "default", Nodes: 2, ReadyNodes: 2, GPUs: 16, AllocatedGPUs: 2},
			{Name: "empty"},
			{Name: "h100", Nodes: 1, ReadyNodes: 1, GPUs: 8, AllocatedGPUs: 4},
		},
		Projects: []scheduler.QueueStatus{
			{Name: "vision", NodePool: "a100", Deserved: 2, Limit: -1, Allocated: 4, AllocatedNonPreemptible: 1, Borrowed: 2, RunningWorkloads: 1},
			{Name: "nlp", NodePool: "h100", Deserved: 8, Allocated: 4, Requested: 4, PendingWorkloads: 1},
		},
		Departments: []scheduler.QueueStatus{
			{Name: "research", NodePool: "a100", Allocated: 4, Borrowed: 1, RunningWorkloads: 1},
		},
	}
	var result *kube.Result
	l := newLiveStatus(func() *kube.Result { return result })

	// Before the first cycle: zeros.
	if got := l.NodePoolStatus("a100"); got != (views.NodePoolStatus{}) {
		t.Errorf("before the first cycle: %+v", got)
	}
	if got := l.Usage("project", "vision", "a100"); got != (views.Usage{}) {
		t.Errorf("before the first cycle: %+v", got)
	}

	result = &kube.Result{View: &kube.View{}, Plan: plan}
	pools := map[string]views.NodePoolStatus{
		"a100":    {Nodes: 2, ReadyNodes: 1, GPUs: 16, AllocatedGPUs: 5},
		"h100":    {Nodes: 1, ReadyNodes: 1, GPUs: 8, AllocatedGPUs: 4},
		"default": {Nodes: 2, ReadyNodes: 2, GPUs: 16, AllocatedGPUs: 2},
		"empty":   {},
		"unknown": {},
	}
	for pool, want := range pools {
		if got := l.NodePoolStatus(pool); got != want {
			t.Errorf("pool %s: got %+v, want %+v", pool, got, want)
		}
	}
	usage := []struct {
		kind, name, pool string
		want             views.Usage
	}{
		{"project", "vision", "a100", views.Usage{Allocated: 4, AllocatedNonPreemptible: 1, Borrowed: 2, RunningWorkloads: 1}},
		{"project", "nlp", "h100", views.Usage{Allocated: 4, Requested: 4, PendingWorkloads: 1}},
		{"project", "nlp", "a100", views.Usage{}},
		{"department", "research", "a100", views.Usage{Allocated: 4, Borrowed: 1, RunningWorkloads: 1}},
		{"department", "vision", "a100", views.Usage{}}, // kinds do not mix
	}
	for _, u := range usage {
		if got := l.Usage(u.kind, u.name, u.pool); got != u.want {
			t.Errorf("%s %s in %s: got %+v, want %+v", u.kind, u.name, u.pool, got, u.want)
		}
	}

	// A new cycle replaces the numbers; the same one is not indexed again.
	if l.result != result {
		t.Fatal("the status is not cached by cycle")
	}
	plan2 := *plan
	plan2.Projects = []scheduler.QueueStatus{{Name: "vision", NodePool: "a100", Allocated: 8, RunningWorkloads: 2}}
	result = &kube.Result{View: &kube.View{}, Plan: &plan2}
	if got := l.Usage("project", "vision", "a100"); got.Allocated != 8 || got.RunningWorkloads != 2 {
		t.Errorf("after a new cycle: %+v", got)
	}
	if got := l.Usage("project", "nlp", "h100"); got != (views.Usage{}) {
		t.Errorf("a project gone from the new cycle keeps old numbers: %+v", got)
	}

	if orgStatusSource(nil) != nil {
		t.Error("without a scheduler the source must be nil (zeros in the web layer)")
	}
}
