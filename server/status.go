package server

import (
	"slices"
	"strings"
	"sync"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/web"
)

// liveStatus is the organization's live status (api.md "Organization and quotas": status)
// read from the scheduler's last cycle. The lookups are indexed once per cycle, on the first
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
	l.pools = poolStatuses(&r.Snapshot, r.Plan)
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

// poolStatuses counts each pool's nodes and GPUs. A node belongs to the first pool by name whose
// label it carries, else to the first pool without a label (the default pool), as the
// scheduler places it. Allocated GPUs are what pods hold on the pool's nodes after the plan:
// Arbiter's bound pods (terminating ones still hold theirs), the pods it binds in this plan,
// and other schedulers' pods.
func poolStatuses(s *scheduler.Snapshot, p *scheduler.Plan) map[string]views.NodePoolStatus {
	pools := slices.Clone(s.NodePools)
	slices.SortFunc(pools, func(a, b scheduler.NodePool) int { return strings.Compare(a.Name, b.Name) })
	poolOf := func(n *scheduler.Node) string {
		catchAll := ""
		for _, np := range pools {
			if np.LabelKey == "" {
				if catchAll == "" {
					catchAll = np.Name
				}
				continue
			}
			if v, ok := n.Labels[np.LabelKey]; ok && v == np.LabelValue {
				return np.Name
			}
		}
		return catchAll
	}

	allocated := map[string]int64{} // by node
	podGPUs := map[string]int64{}   // pending pods by UID, for the plan's binds
	for i := range s.Workloads {
		for _, pod := range s.Workloads[i].Pods {
			if pod.NodeName != "" {
				allocated[pod.NodeName] += pod.Requests.GPUs
			} else if pod.UID != "" {
				podGPUs[pod.UID] = pod.Requests.GPUs
			}
		}
	}
	for _, b := range p.Binds {
		allocated[b.Node] += podGPUs[b.Pod.UID]
	}

	out := make(map[string]views.NodePoolStatus, len(pools))
	for _, np := range pools {
		out[np.Name] = views.NodePoolStatus{}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		pool := poolOf(n)
		if pool == "" {
			continue
		}
		st := out[pool]
		st.Nodes++
		if n.Ready {
			st.ReadyNodes++
		}
		st.GPUs += int(n.Allocatable.GPUs)
		st.AllocatedGPUs += int(n.Occupied.GPUs + allocated[n.Name])
		out[pool] = st
	}
	return out
}
