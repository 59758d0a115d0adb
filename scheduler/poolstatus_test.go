package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodePoolStatus(t *testing.T) {
	const key = "arbiter.dev/node-pool"
	s := snap().
		pool("h100", key, "h100", Binpack).pool("a100", key, "a100", Binpack).pool("empty", key, "none", Binpack).
		node(
			node("a-0").gpus(8).label(key, "a100"),
			node("a-1").gpus(8).label(key, "a100").notReady().occupied(1), // one GPU held by another scheduler's pod
			node("h-0").gpus(8).label(key, "h100"),
			node("cpu-0").gpus(8),
			node("other-0").gpus(8).label(key, "other").occupied(2), // a label no pool selects: the default pool
		).
		project(project("vision", 0).quota("a100", 2, NoLimit, 2).pools("a100"),
			project("nlp", 0).quota("h100", 8, NoLimit, 2).pools("h100")).
		wl(wl("runs").in("vision").gpus(2).on(1, "a-0"),
			wl("leaves").in("vision").gpus(2).on(1, "a-1").terminating("someone"), // still holds its GPUs
			wl("starts").in("nlp").gpus(4).queued(1),                              // bound by this plan
			wl("waits").in("nlp").gpus(8).queued(2),                               // still pending
			wl("paused").in("vision").suspended()).
		build()
	// A suspended Job's pod still on its node holds its GPU there until it is gone.
	for i := range s.Workloads {
		if w := &s.Workloads[i]; w.Name == "paused" {
			w.Pods[0].UID, w.Pods[0].NodeName, w.Pods[0].Terminating = "uid-paused-0", "a-0", true
		}
	}

	plan := s.Plan()
	if len(plan.Binds) != 1 || plan.Binds[0].Node != "h-0" {
		t.Fatalf("the situation is not as meant: binds %+v", plan.Binds)
	}
	want := []NodePoolStatus{ // by name
		{Name: "a100", Nodes: 2, ReadyNodes: 1, GPUs: 16, ReadyGPUs: 8, AllocatedGPUs: 6},
		{Name: "default", Nodes: 2, ReadyNodes: 2, GPUs: 16, ReadyGPUs: 16, AllocatedGPUs: 2},
		{Name: "empty"},
		{Name: "h100", Nodes: 1, ReadyNodes: 1, GPUs: 8, ReadyGPUs: 8, AllocatedGPUs: 4},
	}
	if diff := cmp.Diff(want, plan.NodePools); diff != "" {
		t.Errorf("node pools (-want +got):\n%s", diff)
	}
}
