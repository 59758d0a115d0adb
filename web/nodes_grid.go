package web

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
)

// gridFilter is what the Nodes page is filtered by; empty fields do not filter.
type gridFilter struct {
	Pool, Project string
}

// nodeGrid lays out the GPUs of a cycle's nodes, by node name: on each node the pods bound
// to it hold cells in a stable order (by workload name, then pod name), the GPUs pods Arbiter
// does not schedule request next, and the rest are free. A workload is named only when
// visible says its project may be read by the caller; otherwise its cells say only that
// another project holds them. Priority and preemptibility are as the plan resolved them; a
// project's cells and legend entry wear its swatch (projectSwatches).
func nodeGrid(snap *scheduler.Snapshot, plan *scheduler.Plan, f gridFilter, visible func(project string) bool, swatches map[string]views.Swatch) views.NodeGrid {
	g := views.NodeGrid{Nodes: []views.NodeGPUs{}, Legend: []views.ProjectColor{}, Pools: []string{}, Projects: []string{}}
	if snap == nil {
		return g
	}
	pools := slices.Clone(snap.NodePools)
	slices.SortFunc(pools, func(a, b scheduler.NodePool) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range pools {
		g.Pools = append(g.Pools, p.Name)
	}
	for _, p := range snap.Projects {
		if visible(p.Name) {
			g.Projects = append(g.Projects, p.Name)
		}
	}
	slices.Sort(g.Projects)

	running := map[string]*scheduler.RunningWorkload{}
	if plan != nil {
		for i := range plan.Running {
			running[plan.Running[i].Workload] = &plan.Running[i]
		}
	}
	type holder struct {
		w   *scheduler.Workload
		pod *scheduler.Pod
	}
	byNode := map[string][]holder{}
	for i := range snap.Workloads {
		w := &snap.Workloads[i]
		for j := range w.Pods {
			if p := &w.Pods[j]; p.NodeName != "" && p.Requests.GPUs > 0 {
				byNode[p.NodeName] = append(byNode[p.NodeName], holder{w, p})
			}
		}
	}

	nodes := slices.Clone(snap.Nodes)
	slices.SortFunc(nodes, func(a, b scheduler.Node) int { return cmp.Compare(a.Name, b.Name) })
	legend := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		pool := scheduler.NodePoolOf(pools, n)
		if f.Pool != "" && pool != f.Pool {
			continue
		}
		hs := byNode[n.Name]
		slices.SortFunc(hs, func(a, b holder) int {
			return cmp.Or(cmp.Compare(a.w.Namespace+"/"+a.w.Name, b.w.Namespace+"/"+b.w.Name),
				cmp.Compare(a.w.UID, b.w.UID), cmp.Compare(a.pod.Name, b.pod.Name))
		})
		total := int(n.Allocatable.GPUs)
		ng := views.NodeGPUs{Name: n.Name, Pool: pool, Ready: n.Ready, Unschedulable: n.Unschedulable, GPUs: total, Cells: []views.GPUCell{}}
		add := func(c views.GPUCell) {
			if len(ng.Cells) < total {
				ng.Cells = append(ng.Cells, c)
			}
		}
		matches := f.Project == ""
		for _, h := range hs {
			c := views.GPUCell{State: views.GPUHidden}
			if visible(h.w.Project) {
				c = views.GPUCell{State: views.GPUHeld, Workload: h.w.Namespace + "/" + h.w.Name, WorkloadUID: h.w.UID,
					Project: h.w.Project, Swatch: swatchOf(swatches, h.w.Project)}
				if r := running[h.w.UID]; r != nil {
					c.Priority, c.Preemptible = r.Priority.Name, r.Preemptibility == scheduler.Preemptible
				}
			}
			if f.Project != "" {
				c.Dim = c.State != views.GPUHeld || c.Project != f.Project
				matches = matches || !c.Dim
			}
			for range h.pod.Requests.GPUs {
				add(c)
			}
		}
		for range n.Occupied.GPUs {
			add(views.GPUCell{State: views.GPUExternal, Dim: f.Project != ""})
		}
		ng.Held = len(ng.Cells)
		for len(ng.Cells) < total {
			add(views.GPUCell{State: views.GPUFree, Dim: f.Project != ""})
		}
		if !matches {
			continue
		}
		for j := range ng.Cells {
			c := &ng.Cells[j]
			c.Label = cellLabel(j, c)
			if c.State == views.GPUHeld {
				legend[c.Project] = true
			}
		}
		g.Nodes = append(g.Nodes, ng)
	}
	for _, p := range slices.Sorted(maps.Keys(legend)) {
		g.Legend = append(g.Legend, views.ProjectColor{Project: p, Swatch: swatchOf(swatches, p)})
	}
	return g
}

// cellLabel is a GPU cell in words, for the hover title and screen readers.
func cellLabel(i int, c *views.GPUCell) string {
	gpu := "GPU " + strconv.Itoa(i+1) + ": "
	switch c.State {
	case views.GPUHeld:
		project := c.Project
		if project == "" {
			project = "no project"
		} else {
			project = "project " + project
		}
		pre := "non-preemptible"
		if c.Preemptible {
			pre = "preemptible"
		}
		if c.Priority == "" { // bound since the plan was made
			return fmt.Sprintf("%s%s (%s, priority not yet resolved)", gpu, c.Workload, project)
		}
		return fmt.Sprintf("%s%s (%s, priority %s, %s)", gpu, c.Workload, project, c.Priority, pre)
	case views.GPUHidden:
		return gpu + "held by another project"
	case views.GPUExternal:
		return gpu + "held by a pod Arbiter does not schedule"
	default:
		return gpu + "free"
	}
}
