package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// report is phase 5: reasons and queue positions of what waits (S23), what runs, and the
// per-pool summary the console shows.
func (c *cycle) report() {
	nPools := len(c.pools)
	counts := make([]struct {
		requested        int64
		pending, running int
	}, len(c.projects)*nPools)

	for wi := range c.wls {
		if ws := &c.wls[wi]; ws.project < 0 && ws.pendingPods > 0 {
			c.plan.Pending = append(c.plan.Pending, c.pendingEntry(int32(wi), 0))
		}
	}
	// without a project there is no queue: by UID, so that the order of the input does not matter
	slices.SortFunc(c.plan.Pending, func(a, b PendingWorkload) int { return cmp.Compare(a.Workload, b.Workload) })
	for j := range c.projects {
		p := &c.projects[j]
		pos := 0
		for _, wi := range p.queue {
			if c.wls[wi].outcome == admitted {
				continue
			}
			pos++
			e := c.pendingEntry(wi, pos)
			c.plan.Pending = append(c.plan.Pending, e)
			if len(p.pools) > 0 {
				cnt := &counts[j*nPools+int(p.pools[0])]
				cnt.pending++
				cnt.requested += e.RequestedGPUs
			}
		}
	}

	c.reportRunning(func(j, pool int32) { counts[int(j)*nPools+int(pool)].running++ })

	for j := range c.projects {
		p := &c.projects[j]
		for _, pool := range p.pools {
			cnt := counts[j*nPools+int(pool)]
			s := queueStatus(&p.group, pool, c.pools[pool].pool.Name)
			s.Requested, s.PendingWorkloads, s.RunningWorkloads = cnt.requested, cnt.pending, cnt.running
			c.plan.Projects = append(c.plan.Projects, s)
		}
	}
	for d := range c.depts {
		dept := &c.depts[d]
		if dept.unbounded {
			continue
		}
		for pool := range c.pools {
			s := queueStatus(&dept.group, int32(pool), c.pools[pool].pool.Name)
			for j := range c.projects {
				if c.projects[j].dept == int32(d) {
					cnt := counts[j*nPools+pool]
					s.Requested += cnt.requested
					s.PendingWorkloads += cnt.pending
					s.RunningWorkloads += cnt.running
				}
			}
			c.plan.Departments = append(c.plan.Departments, s)
		}
	}
	slices.SortStableFunc(c.plan.Warnings, func(a, b Warning) int { return cmp.Compare(a.Workload, b.Workload) })
}

func queueStatus(g *group, pool int32, poolName string) QueueStatus {
	sh := &g.shares[pool]
	return QueueStatus{Name: g.name, NodePool: poolName, Deserved: sh.quota.Deserved, Limit: sh.quota.Limit,
		Allocated: sh.alloc, AllocatedNonPreemptible: sh.allocNP, Borrowed: max(0, sh.alloc-sh.quota.Deserved)}
}

// held is what a workload holds once the plan is carried out: GPUs of pods bound at the
// snapshot or bound by this plan, and the pool of the first of them.
func (c *cycle) held(ws *wlState) (pool int32, gpus int64, any bool) {
	pool = -1
	if ws.evicted || ws.suspended {
		return pool, 0, false
	}
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		ps := &c.pods[k]
		if ps.node < 0 || ps.terminating || ps.reserved {
			continue
		}
		if pool < 0 {
			pool = c.nodes[ps.node].pool
		}
		gpus += ps.req.GPUs
		any = true
	}
	return pool, gpus, any
}

// reportRunning lists running workloads by project, node pool and the ranking of section 8,
// marking as borrowed those that end beyond their project's deserved quota.
func (c *cycle) reportRunning(count func(j, pool int32)) {
	type held struct {
		wi   int32
		pool int32
		gpus int64
	}
	list := make([]held, 0, len(c.wls))
	for wi := range c.wls {
		if pool, gpus, ok := c.held(&c.wls[wi]); ok {
			list = append(list, held{int32(wi), pool, gpus})
		}
	}
	slices.SortFunc(list, func(a, b held) int {
		if d := cmp.Compare(c.wls[a.wi].project, c.wls[b.wi].project); d != 0 {
			return d
		}
		if a.pool != b.pool {
			return cmp.Compare(a.pool, b.pool)
		}
		return c.compareRank(a.wi, b.wi)
	})
	c.plan.Running = make([]RunningWorkload, len(list))
	var cum int64
	for i, h := range list {
		ws := &c.wls[h.wi]
		if i == 0 || ws.project != c.wls[list[i-1].wi].project || h.pool != list[i-1].pool {
			cum = 0
		}
		cum += h.gpus
		r := &c.plan.Running[i]
		*r = RunningWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name,
			Priority: ws.prio, Preemptibility: preemptibility(ws.preemptible), GPUs: h.gpus}
		if h.pool >= 0 {
			r.NodePool = c.pools[h.pool].pool.Name
		}
		if ws.project >= 0 {
			r.Project = c.projects[ws.project].name
			if h.pool >= 0 {
				r.Borrowed = cum > c.projects[ws.project].shares[h.pool].quota.Deserved
				count(ws.project, h.pool)
			}
		}
	}
}

func preemptibility(preemptible bool) Preemptibility {
	if preemptible {
		return Preemptible
	}
	return NonPreemptible
}

func (c *cycle) pendingEntry(wi int32, pos int) PendingWorkload {
	ws := &c.wls[wi]
	e := PendingWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name, Priority: ws.prio,
		Preemptibility: preemptibility(ws.preemptible), QueuePosition: pos}
	if ws.project >= 0 {
		e.Project = c.projects[ws.project].name
	}
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		if ps := &c.pods[k]; !ps.bound && !ps.terminating && (ps.node < 0 || ps.reserved) {
			e.RequestedGPUs += ps.req.GPUs
			if ps.reserved {
				e.NominatedGPUs += ps.req.GPUs
			}
		}
	}
	if ws.waitEvictions && ws.outcome == waiting {
		ws.fail = failure{reason: WaitingForEvictions, pool: -1}
	}
	if ws.fail.reason == "" {
		ws.fail = failure{reason: InsufficientCapacity, pool: -1}
	}
	e.Reason = ws.fail.reason
	if len(ws.nominatedNodes) > 0 && e.Reason == WaitingForEvictions {
		slices.Sort(ws.nominatedNodes)
		e.NominatedNodes = make([]string, len(ws.nominatedNodes))
		for i, n := range ws.nominatedNodes {
			e.NominatedNodes[i] = c.nodes[n].node.Name
		}
	}
	e.Message = c.message(ws, &e)
	return e
}

func gpus(n int64) string {
	if n == 1 {
		return "1 GPU"
	}
	return strconv.FormatInt(n, 10) + " GPUs"
}

// message is the sentence a user reads next to the reason (S23): what blocks, and what to do.
func (c *cycle) message(ws *wlState, e *PendingWorkload) string {
	f := &ws.fail
	pool := ""
	if f.pool >= 0 {
		pool = c.pools[f.pool].pool.Name
	}
	who := "project " + e.Project
	if f.dept && ws.dept >= 0 {
		who = "department " + c.depts[ws.dept].name
	}
	switch f.reason {
	case GangIncomplete:
		return "Waiting for all " + strconv.FormatInt(f.amount, 10) + " pods of the gang (" +
			strconv.FormatInt(f.bound, 10) + " exist); it starts once its controller has created them all."
	case NoProject:
		return "The workload belongs to no project: add the label arbiter.dev/project=<project> or run it in a namespace that a project owns."
	case OverLimit:
		return who + " would use " + gpus(f.amount) + " in pool " + pool + ", limit " +
			strconv.FormatInt(f.bound, 10) + "; wait for its other workloads to finish or ask an administrator to raise the limit."
	case NonPreemptibleOverQuota:
		return "You have reached the limit of non-preemptible resources: " + who + " would use " + gpus(f.amount) +
			" of non-preemptible work in pool " + pool + ", deserved " + strconv.FormatInt(f.bound, 10) +
			"; submit it as preemptible or wait for other non-preemptible work to finish."
	case InsufficientCapacity:
		if pool == "" {
			return "Not enough free capacity for " + gpus(e.RequestedGPUs) + "; it starts when other work finishes."
		}
		return "Not enough free capacity in pool " + pool + " for " + gpus(f.amount) + " (" +
			strconv.FormatInt(max(f.bound, 0), 10) + " free, or not on nodes that fit its pods); it starts when other work finishes."
	case NoMatchingNodes:
		if pool == "" {
			return "The project may use no node pool; ask an administrator to give it one."
		}
		return "No node in pool " + pool + " can ever host its pods (node selector, affinity, tolerations or size); " +
			"change the pod spec or ask an administrator for matching nodes."
	case WaitingForEvictions:
		if len(e.NominatedNodes) == 0 {
			return "Waiting for preempted workloads to release their GPUs; it starts when they are gone."
		}
		return "Waiting for preempted workloads to release their GPUs on " + strings.Join(e.NominatedNodes, ", ") +
			"; it starts when they are gone."
	case BehindStrictHead:
		return "The project queues strictly: waiting behind " + c.wls[f.head].w.Name +
			", which cannot start yet; it starts after that one does."
	}
	return string(f.reason)
}
