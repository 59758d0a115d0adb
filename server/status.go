package server

import (
	"sync"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// liveStatus is the organization's live status (docs/organization.md "Status")
// read from the scheduler's last cycle: the plan's per-pool figures for node pools, projects
// and departments. The lookups are indexed once per cycle, on the first
// request that needs them, so a page listing many projects costs map reads only.
type liveStatus struct {
	last func() *kube.Result

	mu     sync.Mutex
	result *kube.Result // the cycle the maps below were built from
	pools  map[string]views.NodePoolStatus
	usage  map[usageKey]views.Usage
}

type usageKey struct{ kind, name, pool string }

// orgStatusSource gives the web layer the scheduler's numbers, or nil (zeros) without a scheduler.
func orgStatusSource(s *kube.Scheduler) web.OrgStatusSource {
	if s == nil {
		return nil
	}
	return newLiveStatus(s.Last)
}

func newLiveStatus(last func() *kube.Result) *liveStatus { return &liveStatus{last: last} }

// NodePoolStatus reports a pool's nodes, ready nodes, GPUs and allocated GPUs.
func (l *liveStatus) NodePoolStatus(pool string) views.NodePoolStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	return l.pools[pool]
}

// Usage reports what a "project" or "department" uses in a pool.
func (l *liveStatus) Usage(kind, name, pool string) views.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	return l.usage[usageKey{kind, name, pool}]
}

// refresh rebuilds the maps when the scheduler has published a newer cycle. Callers hold mu.
func (l *liveStatus) refresh() {
	r := l.last()
	if r == l.result && l.pools != nil {
		return
	}
	l.result = r
	l.pools = map[string]views.NodePoolStatus{}
	l.usage = map[usageKey]views.Usage{}
	if r == nil || r.View == nil || r.Plan == nil {
		return
	}
	for _, np := range r.Plan.NodePools {
		l.pools[np.Name] = views.NodePoolStatus{Nodes: np.Nodes, ReadyNodes: np.ReadyNodes,
			GPUs: int(np.GPUs), AllocatedGPUs: int(np.AllocatedGPUs)}
	}
	for _, q := range r.Plan.Projects {
		l.usage[usageKey{"project", q.Name, q.NodePool}] = usageOf(q)
	}
	for _, q := range r.Plan.Departments {
		l.usage[usageKey{"department", q.Name, q.NodePool}] = usageOf(q)
	}
}

func usageOf(q scheduler.QueueStatus) views.Usage {
	return views.Usage{
		Allocated: int(q.Allocated), AllocatedNonPreemptible: int(q.AllocatedNonPreemptible),
		Borrowed: int(q.Borrowed), Requested: int(q.Requested),
		PendingWorkloads: q.PendingWorkloads, RunningWorkloads: q.RunningWorkloads,
	}
}

// workloadPods gives the web layer a workload's pods from the scheduler's last cycle, or nil
// (not a typed nil) without a scheduler.
func workloadPods(s *kube.Scheduler) web.WorkloadPods {
	if s == nil {
		return nil
	}
	return lastPods(s.Last)
}

// lastPods reads a workload's pods out of the last cycle's view.
type lastPods func() *kube.Result

func (last lastPods) WorkloadPods(uid string) ([]views.WorkloadPod, bool) {
	r := last()
	if r == nil || r.View == nil {
		return nil, false
	}
	w, meta := r.Workload(uid)
	if w == nil {
		return nil, false
	}
	return podViews(w, meta), true
}

// Pods are every workload's pods in the last cycle's view, by workload in UID order.
func (last lastPods) Pods() []views.WorkloadPod {
	r := last()
	if r == nil || r.View == nil {
		return nil
	}
	var pods []views.WorkloadPod
	for i := range r.Snapshot.Workloads {
		w, meta := r.Workload(r.Snapshot.Workloads[i].UID)
		pods = append(pods, podViews(w, meta)...)
	}
	return pods
}

// podViews are w's pods, with what meta (nil for a view made without one) knows of each.
func podViews(w *scheduler.Workload, meta *kube.WorkloadMeta) []views.WorkloadPod {
	byUID := map[string]kube.PodMeta{}
	if meta != nil {
		for _, m := range meta.Pods {
			byUID[string(m.UID)] = m
		}
	}
	pods := make([]views.WorkloadPod, 0, len(w.Pods))
	for _, p := range w.Pods {
		phase := "Pending"
		switch {
		case p.Terminating:
			phase = "Terminating"
		case p.NodeName != "":
			phase = "Bound" // placed on its node (the view does not follow the kubelet)
		}
		v := views.WorkloadPod{Name: p.Name, Node: p.NodeName, Phase: phase, GPUs: int(p.Requests.GPUs),
			UID: p.UID, WorkloadUID: w.UID, PriorityClassName: p.PriorityClassName, Containers: []views.PodContainer{}}
		if m, ok := byUID[p.UID]; ok {
			v.CreatedAt, v.K8sPhase = m.Created.UTC(), m.Phase
			if !m.Started.IsZero() {
				started := m.Started.UTC()
				v.StartedAt = &started
			}
			for _, c := range m.Containers {
				v.Containers = append(v.Containers, views.PodContainer{Name: c.Name, Image: c.Image})
			}
		}
		pods = append(pods, v)
	}
	return pods
}

// WorkloadGrouping says which rule grouped a workload's pods in the last cycle's view, or "".
func (last lastPods) WorkloadGrouping(uid string) string {
	r := last()
	if r == nil || r.View == nil {
		return ""
	}
	if _, m := r.Workload(uid); m != nil {
		return m.GroupedBy
	}
	return ""
}

// preemptibilityStandings gives the web layer what a change of a running workload's
// preemptibility is checked against (S14), from the scheduler's last cycle; nil (not a typed
// nil) without a scheduler.
func preemptibilityStandings(s *kube.Scheduler) web.PreemptibilityStandings {
	if s == nil {
		return nil
	}
	return lastStandings(s.Last)
}

// lastStandings reads a running workload's standing out of the last cycle's plan and view.
type lastStandings func() *kube.Result

func (last lastStandings) PreemptibilityStanding(uid, department string) (scheduler.PreemptibilityChange, bool) {
	r := last()
	if r == nil || r.View == nil {
		return scheduler.PreemptibilityChange{}, false
	}
	w, _ := r.Workload(uid)
	return r.Plan.PreemptibilityStanding(w, department)
}
