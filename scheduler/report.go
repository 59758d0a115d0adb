package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiterhq/arbiter/internal/english"
	"time"
)

// report is phase 5: reasons and queue positions of what waits (S23), what runs, and the
// per-pool summaries the console shows (projects, departments, node pools).
func (c *cycle) report() {
	nPools := len(c.pools)
	counts := make([]struct {
		requested        int64
		pending, running int
	}, len(c.projects)*nPools)

	// What runs and what waits are reported side by side: at tens of thousands of workloads
	// each takes milliseconds, mostly reading the snapshot's workloads, and neither reads what
	// the other writes (reportRunning writes plan.Running and its own counts, the pending
	// side plan.Pending and the failures of waiting workloads). The plan is the same either way.
	running := make([]int, len(c.projects)*nPools)
	runningDone := make(chan struct{})
	go func() {
		defer close(runningDone)
		c.reportRunning(func(j, pool int32) { running[int(j)*nPools+int(pool)]++ })
	}()

	c.bindsOut()
	n := 0
	for wi := range c.wls {
		if ws := &c.wls[wi]; ws.pendingPods > 0 && ws.outcome != admitted && !c.isExtra(ws) {
			n++
		}
	}
	if n > 0 {
		c.plan.Pending = make([]PendingWorkload, 0, n)
	}
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
			if c.isExtra(&c.wls[wi]) {
				if g, ok := c.joinMinimum(wi); ok {
					if len(p.pools) > 0 {
						counts[j*nPools+int(p.pools[0])].requested += g
					}
					continue
				}
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

	<-runningDone
	for i, n := range running {
		counts[i].running = n
	}

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
	c.reportNodePools()
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
	// What started in this cycle ranks among the rest by priority: sorting only that and
	// merging it in spares sorting again what the load sorted (runningOrder).
	n := 0
	for wi := range c.wls {
		if ws := &c.wls[wi]; !ws.running && ws.pendingPods > 0 {
			if _, _, ok := c.held(ws); ok {
				n++
			}
		}
	}
	started := make([]rankItem, 0, n)
	for wi := range c.wls {
		if ws := &c.wls[wi]; !ws.running && ws.pendingPods > 0 {
			if _, _, ok := c.held(ws); ok {
				started = append(started, c.rankItemOf(int32(wi)))
			}
		}
	}
	compareRank := c.compareRank()
	slices.SortFunc(started, compareRank)

	// Then a stable counting sort by (project, pool), -1 (none) first, gives the report's order.
	nPools := int32(len(c.pools) + 1)
	bucketOf := func(ws *wlState, pool int32) int32 { return (ws.project+1)*nPools + pool + 1 }
	bounds := make([]int32, 2*(int(nPools)*(len(c.projects)+1)+1))
	first, next := bounds[:len(bounds)/2], bounds[len(bounds)/2:] // first[b]: where bucket b starts
	type heldBy struct {
		wi, pool int32
		gpus     int64
	}
	listed := make([]heldBy, 0, len(c.runningOrder)+len(started)) // in the ranking
	running := c.runningOrder
	for len(running)+len(started) > 0 {
		var wi int32
		if len(started) == 0 || len(running) > 0 && compareRank(running[0], started[0]) < 0 {
			wi, running = running[0].wi, running[1:]
		} else {
			wi, started = started[0].wi, started[1:]
		}
		if pool, gpus, ok := c.held(&c.wls[wi]); ok {
			listed = append(listed, heldBy{wi, pool, gpus})
			first[bucketOf(&c.wls[wi], pool)+1]++
		}
	}
	for b := 1; b < len(first); b++ {
		first[b] += first[b-1]
	}
	copy(next, first)

	c.plan.Running = make([]RunningWorkload, len(listed))
	var entryOf []int32 // with semi-preemptible workloads, each entry's part (S26)
	if c.hasSemi {
		entryOf = make([]int32, len(listed))
	}
	for _, l := range listed {
		wi, pool, gpus := l.wi, l.pool, l.gpus
		ws := &c.wls[wi]
		b := bucketOf(ws, pool)
		if entryOf != nil {
			entryOf[next[b]] = wi
		}
		r := &c.plan.Running[next[b]]
		next[b]++
		*r = RunningWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name,
			Priority: c.priority(ws), Preemptibility: c.preemptibilityOf(ws), GPUs: gpus}
		if pool >= 0 {
			r.NodePool = c.pools[pool].pool.Name
		}
		if ws.project >= 0 {
			r.Project = c.projects[ws.project].name
		}
	}
	// borrowed: what ends beyond the deserved quota, adding up GPUs along the ranking
	for b := range len(first) - 1 {
		j, pool := int32(b)/nPools-1, int32(b)%nPools-1
		if j < 0 || pool < 0 {
			continue
		}
		deserved := c.projects[j].shares[pool].quota.Deserved
		var cum int64
		for i := first[b]; i < first[b+1]; i++ {
			r := &c.plan.Running[i]
			cum += r.GPUs
			r.Borrowed = cum > deserved
			if entryOf == nil || !c.isExtra(&c.wls[entryOf[i]]) || !c.heldBefore(entryOf[i]) {
				count(j, pool)
			}
		}
	}
	if entryOf != nil {
		c.mergeParts(entryOf)
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
	e := PendingWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name, Priority: c.priority(ws),
		Preemptibility: c.preemptibilityOf(ws), QueuePosition: pos}
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
	pend := &c.pend[ws.pend]
	if ws.waitEvictions && ws.outcome == waiting {
		pend.fail = failure{reason: WaitingForEvictions, pool: -1}
	}
	if pend.fail.reason == "" {
		pend.fail = failure{reason: InsufficientCapacity, pool: -1}
	}
	e.Reason = pend.fail.reason
	if len(pend.nominatedNodes) > 0 && e.Reason == WaitingForEvictions {
		slices.Sort(pend.nominatedNodes)
		e.NominatedNodes = make([]string, len(pend.nominatedNodes))
		for i, n := range pend.nominatedNodes {
			e.NominatedNodes[i] = c.nodes[n].node.Name
		}
	}
	e.Message = c.message(ws, &e)
	if note := c.delayNote(&pend.fail); note != "" {
		e.Message += note
	}
	return e
}

func gpus(n int64) string { return english.Plural(int(n), "GPU") }

// message is the sentence a user reads next to the reason (S23): what blocks, and what to do.
func (c *cycle) message(ws *wlState, e *PendingWorkload) string {
	f := c.failOf(ws)
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

// delayNote adds to a waiting workload's sentence why nothing was evicted for it yet (S27).
func (c *cycle) delayNote(f *failure) string {
	if f.delay == noDelay {
		return ""
	}
	at := time.Unix(0, f.until).UTC().Format(time.RFC3339)
	switch f.delay {
	case preemptionDelay:
		return " Its project's preemption delay lets it preempt or reclaim from " + at + "."
	case reclaimRuntime:
		return " Borrowed work it could reclaim has run less than its project's reclaim minimum runtime; reclaim is possible from " + at + "."
	}
	return ""
}
