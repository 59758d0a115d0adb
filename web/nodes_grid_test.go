package web

import (
	"testing"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
	"github.com/google/go-cmp/cmp"
)

func TestNodeGrid(t *testing.T) {
	gpus := func(n int64) scheduler.Resources { return scheduler.Resources{GPUs: n} }
	pod := func(name, node string, n int64) scheduler.Pod {
		return scheduler.Pod{UID: name, Namespace: "ml", Name: name, NodeName: node, Requests: gpus(n)}
	}
	snap := &scheduler.Snapshot{
		NodePools: []scheduler.NodePool{
			{Name: "default"}, // the catch-all
			{Name: "a100", LabelKey: "pool", LabelValue: "a100"},
		},
		Projects: []scheduler.Project{{Name: "team-b"}, {Name: "team-a"}, {Name: "secret"}},
		Nodes: []scheduler.Node{
			{Name: "n2", Labels: map[string]string{"pool": "a100"}, Ready: true, Allocatable: gpus(4), Occupied: gpus(1)},
			{Name: "n1", Labels: map[string]string{"pool": "a100"}, Ready: true, Allocatable: gpus(4)},
			{Name: "n3", Ready: false, Unschedulable: true, Allocatable: gpus(2)},
		},
		Workloads: []scheduler.Workload{
			// n1 is shared by two workloads, each given cells in name order (beta's two pods
			// by pod name), not in UID order.
			{UID: "u1", Namespace: "ml", Name: "zeta", Project: "team-a", Pods: []scheduler.Pod{pod("zeta-0", "n1", 1)}},
			{UID: "u2", Namespace: "ml", Name: "beta", Project: "team-b", Pods: []scheduler.Pod{pod("beta-1", "n1", 1), pod("beta-0", "n1", 1)}},
			// A pending pod holds nothing; a project the caller may not read is not named.
			{UID: "u3", Namespace: "ml", Name: "waiting", Project: "team-a", Pods: []scheduler.Pod{pod("waiting-0", "", 2)}},
			{UID: "u4", Namespace: "ops", Name: "hidden", Project: "secret", Pods: []scheduler.Pod{pod("hidden-0", "n2", 2)}},
		},
	}
	plan := &scheduler.Plan{Running: []scheduler.RunningWorkload{
		{Workload: "u1", Priority: scheduler.Priority{Name: "high"}, Preemptibility: scheduler.NonPreemptible},
		{Workload: "u2", Priority: scheduler.Priority{Name: "low"}, Preemptibility: scheduler.Preemptible},
		{Workload: "u4", Priority: scheduler.Priority{Name: "high"}, Preemptibility: scheduler.Preemptible},
	}}
	notSecret := func(p string) bool { return p != "secret" }
	a, b := views.Swatch{Color: 3, Pattern: 1}, views.Swatch{Color: 4, Pattern: 2}
	swatches := map[string]views.Swatch{"team-a": a, "team-b": b, "secret": {Color: 5, Pattern: 3}}
	beta := views.GPUCell{State: views.GPUHeld, Workload: "ml/beta", WorkloadUID: "u2", Project: "team-b", Swatch: b, Priority: "low", Preemptible: true}
	zeta := views.GPUCell{State: views.GPUHeld, Workload: "ml/zeta", WorkloadUID: "u1", Project: "team-a", Swatch: a, Priority: "high"}
	labelled := func(c views.GPUCell, label string) views.GPUCell { c.Label = label; return c }
	dim := func(c views.GPUCell) views.GPUCell { c.Dim = true; return c }
	n1 := views.NodeGPUs{Name: "n1", Pool: "a100", Ready: true, GPUs: 4, Held: 3, Cells: []views.GPUCell{
		labelled(beta, "GPU 1: ml/beta (project team-b, priority low, preemptible)"),
		labelled(beta, "GPU 2: ml/beta (project team-b, priority low, preemptible)"),
		labelled(zeta, "GPU 3: ml/zeta (project team-a, priority high, non-preemptible)"),
		{State: views.GPUFree, Label: "GPU 4: free"},
	}}
	n2 := views.NodeGPUs{Name: "n2", Pool: "a100", Ready: true, GPUs: 4, Held: 3, Cells: []views.GPUCell{
		{State: views.GPUHidden, Label: "GPU 1: held by another project"},
		{State: views.GPUHidden, Label: "GPU 2: held by another project"},
		{State: views.GPUExternal, Label: "GPU 3: held by a pod Arbiter does not schedule"},
		{State: views.GPUFree, Label: "GPU 4: free"},
	}}
	n3 := views.NodeGPUs{Name: "n3", Pool: "default", Unschedulable: true, GPUs: 2, Cells: []views.GPUCell{
		{State: views.GPUFree, Label: "GPU 1: free"}, {State: views.GPUFree, Label: "GPU 2: free"},
	}}
	pools, projects := []string{"a100", "default"}, []string{"team-a", "team-b"}
	legend := []views.ProjectColor{{Project: "team-a", Swatch: a}, {Project: "team-b", Swatch: b}}
	for _, tc := range []struct {
		name    string
		snap    *scheduler.Snapshot
		filter  gridFilter
		visible func(string) bool
		want    views.NodeGrid
	}{
		{"no cycle yet", nil, gridFilter{}, notSecret,
			views.NodeGrid{Nodes: []views.NodeGPUs{}, Legend: []views.ProjectColor{}, Pools: []string{}, Projects: []string{}}},
		{"every node, by name", snap, gridFilter{}, notSecret,
			views.NodeGrid{Nodes: []views.NodeGPUs{n1, n2, n3}, Legend: legend, Pools: pools, Projects: projects}},
		{"a pool", snap, gridFilter{Pool: "default"}, notSecret,
			views.NodeGrid{Nodes: []views.NodeGPUs{n3}, Legend: []views.ProjectColor{}, Pools: pools, Projects: projects}},
		{"a project: its nodes, the rest dimmed", snap, gridFilter{Project: "team-a"}, notSecret,
			views.NodeGrid{Nodes: []views.NodeGPUs{{Name: "n1", Pool: "a100", Ready: true, GPUs: 4, Held: 3, Cells: []views.GPUCell{
				dim(n1.Cells[0]), dim(n1.Cells[1]), n1.Cells[2], dim(n1.Cells[3]),
			}}}, Legend: legend, Pools: pools, Projects: projects}},
		{"a project the caller may not read shows nothing", snap, gridFilter{Project: "secret"}, notSecret,
			views.NodeGrid{Nodes: []views.NodeGPUs{}, Legend: []views.ProjectColor{}, Pools: pools, Projects: projects}},
		{"a caller who may read nothing", snap, gridFilter{Pool: "a100"}, func(string) bool { return false },
			views.NodeGrid{Nodes: []views.NodeGPUs{
				{Name: "n1", Pool: "a100", Ready: true, GPUs: 4, Held: 3, Cells: []views.GPUCell{
					n2.Cells[0], {State: views.GPUHidden, Label: "GPU 2: held by another project"},
					{State: views.GPUHidden, Label: "GPU 3: held by another project"}, n1.Cells[3]}},
				n2,
			}, Legend: []views.ProjectColor{}, Pools: pools, Projects: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nodeGrid(tc.snap, plan, tc.filter, tc.visible, swatches)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("nodeGrid (-want +got):\n%s", d)
			}
		})
	}
}
