package scheduler

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/arbiterhq/arbiter/internal/english"
	"github.com/arbiterhq/arbiter/internal/prefetch"
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
	// the other writes (the running side lists and fills plan.Running, the pending side writes
	// plan.Pending and the failures of waiting workloads). The pending side, done first, then
	// helps fill plan.Running. The plan is the same either way.
	var rr runningReport
	listed, filled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(filled)
		c.listRunning(&rr)
		close(listed)
		c.fillRunning(&rr)
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
		for i, wi := range p.queue {
			ahead(p.queue, i, func(wi *int32) { c.state(*wi) }, func(wi *int32) { c.pointedTo(*wi) })
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

	<-listed
	c.fillRunning(&rr) // beside the other side, which started first
	<-filled
	c.markBorrowed(&rr, func(j, pool int32) { counts[int(j)*nPools+int(pool)].running++ })

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
	c.fillFairShares()
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

// heldBy is a workload that holds GPUs once the plan is carried out, in the pool of its first
// pod, its bucket (bucketOf) and its place in plan.Running.
type heldBy struct {
	wi, pool   int32
	bucket, at int32
	gpus       int64
}

// runningReport is the running side of the report while it is made: listRunning orders it,
// both sides of the report fill its entries (fillRunning), and markBorrowed finishes it.
type runningReport struct {
	listed  []heldBy // in the ranking
	first   []int32  // first[b]: where bucket b (a project and pool) starts in plan.Running
	nPools  int32    // pools plus one: bucket b is project b/nPools-1, pool b%nPools-1
	entryOf []int32  // with semi-preemptible workloads, each entry's part (S26)
	filled  atomic.Int64
}

// fillChunk is how many entries a side of the report fills at a time.
const fillChunk = 2048

// listRunning orders running workloads by project, node pool and the ranking of section 8,
// and makes room for them in plan.Running.
func (c *cycle) listRunning(rr *runningReport) {
	// What started in this cycle ranks among the rest by priority: sorting only that and
	// merging it in spares sorting again what the load sorted (runningOrder).
	// What started is what the cycle binds pods of (a resumed workload's are bound later).
	started := reuse(c.scratch.started, len(c.pend)) // each workload with pending pods has a pendState
	seen := reuse(c.scratch.seen, (len(c.wls)+63)/64)[:(len(c.wls)+63)/64]
	clear(seen)
	c.scratch.seen = seen
	for i, b := range c.binds {
		ahead(c.binds, i, func(b *placedPod) { c.state(b.wi) }, func(b *placedPod) { prefetch.Of(c.wls[b.wi].w) })
		if i+nearAhead/2 < len(c.binds) { // and the UID's first bytes, which the ranking reads, through that
			prefetch.String(c.wls[c.binds[i+nearAhead/2].wi].w.UID)
		}
		if ws := &c.wls[b.wi]; !ws.running && seen[b.wi>>6]&(1<<(b.wi&63)) == 0 {
			seen[b.wi>>6] |= 1 << (b.wi & 63)
			started = append(started, c.rankItemOf(b.wi))
		}
	}
	compareRank := c.compareRank()
	slices.SortFunc(started, compareRank)
	c.scratch.started = started

	// Then a stable counting sort by (project, pool), -1 (none) first, gives the report's order.
	rr.nPools = int32(len(c.pools) + 1)
	bounds := make([]int32, 2*(int(rr.nPools)*(len(c.projects)+1)+1))
	first, next := bounds[:len(bounds)/2], bounds[len(bounds)/2:]
	listed := reuse(c.scratch.listed, len(c.runningOrder)+len(started))
	running := c.runningOrder
	for len(running)+len(started) > 0 {
		ahead(running, 0, c.rankedState, c.rankedPod)
		ahead(started, 0, c.rankedState, c.rankedPod)
		var wi int32
		if len(started) == 0 || len(running) > 0 && compareRank(running[0], started[0]) < 0 {
			wi, running = running[0].wi, running[1:]
		} else {
			wi, started = started[0].wi, started[1:]
		}
		if pool, gpus, ok := c.held(&c.wls[wi]); ok {
			b := rr.bucketOf(&c.wls[wi], pool)
			listed = append(listed, heldBy{wi: wi, pool: pool, bucket: b, gpus: gpus})
			first[b+1]++
		}
	}
	c.scratch.listed = listed
	for b := 1; b < len(first); b++ {
		first[b] += first[b-1]
	}
	copy(next, first)
	for i := range listed {
		l := &listed[i]
		l.at = next[l.bucket]
		next[l.bucket]++
	}
	rr.listed, rr.first = listed, first
	c.plan.Running = make([]RunningWorkload, len(listed))
	if c.hasSemi {
		rr.entryOf = make([]int32, len(listed))
	}
}

// rankedState and rankedPod ask for what listRunning reads of a ranked workload.
func (c *cycle) rankedState(r *rankItem) { c.state(r.wi) }
func (c *cycle) rankedPod(r *rankItem)   { prefetch.Of(&c.pods[c.wls[r.wi].firstPod]) }

func (rr *runningReport) bucketOf(ws *wlState, pool int32) int32 {
	return (ws.project+1)*rr.nPools + pool + 1
}

// fillRunning writes plan.Running's entries, a chunk at a time, until none is left. Both sides
// of the report call it once listRunning is done: each entry has its own place, and at tens of
// thousands of entries the writing, mostly reading the snapshot's workloads, is most of the
// running report.
func (c *cycle) fillRunning(rr *runningReport) {
	for {
		to := int(rr.filled.Add(fillChunk))
		from := to - fillChunk
		if from >= len(rr.listed) {
			return
		}
		chunk := rr.listed[from:min(to, len(rr.listed))]
		for i, l := range chunk {
			// each entry also writes a place of its own in plan.Running
			ahead(chunk, i, func(l *heldBy) { c.state(l.wi) },
				func(l *heldBy) { prefetch.Of(c.wls[l.wi].w); prefetch.Of(&c.plan.Running[l.at]) })
			ws := &c.wls[l.wi]
			if rr.entryOf != nil {
				rr.entryOf[l.at] = l.wi
			}
			r := &c.plan.Running[l.at]
			*r = RunningWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name,
				Priority: c.priority(ws), PriorityAlias: c.resolutions[ws.res].alias, Preemptibility: c.preemptibilityOf(ws), GPUs: l.gpus,
				PriorityFrom: c.resolutions[ws.res].prioFrom, PreemptibilityFrom: c.resolutions[ws.res].preemptFrom}
			if l.pool >= 0 {
				r.NodePool = c.pools[l.pool].pool.Name
			}
			if ws.project >= 0 {
				r.Project = c.projects[ws.project].name
			}
		}
	}
}

// markBorrowed marks as borrowed the running workloads that end beyond their project's
// deserved quota, adding up GPUs along the ranking, and counts each project's per pool.
func (c *cycle) markBorrowed(rr *runningReport, count func(j, pool int32)) {
	first := rr.first
	for b := range len(first) - 1 {
		j, pool := int32(b)/rr.nPools-1, int32(b)%rr.nPools-1
		if j < 0 || pool < 0 {
			continue
		}
		deserved := c.projects[j].shares[pool].quota.Deserved
		var cum int64
		for i := first[b]; i < first[b+1]; i++ {
			r := &c.plan.Running[i]
			cum += r.GPUs
			r.Borrowed = cum > deserved
			if rr.entryOf == nil || !c.isExtra(&c.wls[rr.entryOf[i]]) || !c.heldBefore(rr.entryOf[i]) {
				count(j, pool)
			}
		}
	}
	if rr.entryOf != nil {
		c.mergeParts(rr.entryOf)
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
	res := &c.resolutions[ws.res]
	e := PendingWorkload{Workload: ws.w.UID, Namespace: ws.w.Namespace, Name: ws.w.Name, Priority: c.priority(ws), PriorityAlias: res.alias,
		Preemptibility: c.preemptibilityOf(ws), QueuePosition: pos, PriorityFrom: res.prioFrom, PreemptibilityFrom: res.preemptFrom}
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
	e.AwaitingPods = pend.fail.reason == GangIncomplete && pend.fail.held
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
		e.EvictionsFrom, e.EvictionsHeldBy = time.Unix(0, pend.fail.until).UTC(), pend.fail.delay.String()
	}
	return e
}

func gpus(n int64) string { return english.Plural(int(n), "GPU") }

// message is the sentence a user reads next to the reason (S23): what blocks, and what to do.
func (c *cycle) message(ws *wlState, e *PendingWorkload) string {
	f := c.failOf(ws)
	key, shared := c.messageKeyOf(ws, f)
	if !shared {
		return c.buildMessage(ws, f, e)
	}
	if m, ok := c.messages[key]; ok {
		return m
	}
	m := c.buildMessage(ws, f, e)
	if c.messages == nil {
		c.messages = make(map[messageKey]string)
	}
	c.messages[key] = m
	return m
}

// messageKey is everything a message of the commonest reasons is made of: at tens of
// thousands of waiting workloads most say the same few sentences (not enough free capacity in
// one pool, a project's limit), and building each anew was a tenth of a cycle's allocation.
type messageKey struct {
	reason        Reason
	pool          int32
	dept          bool
	unit          int32 // the project or department named, -1 when none is
	amount, bound int64
	// held says the workload is held back for head (claim.go), inside its own project
	// (sameProject) or not
	held, sameProject bool
	head              int32
}

// messageKeyOf is the key of a failure's message, and whether the message depends on the key
// alone (otherwise it is built for the workload each time).
func (c *cycle) messageKeyOf(ws *wlState, f *failure) (messageKey, bool) {
	k := messageKey{reason: f.reason, pool: f.pool, unit: -1, amount: f.amount, bound: f.bound}
	switch f.reason {
	case OverLimit, NonPreemptibleOverQuota:
		if k.dept = f.dept && ws.dept >= 0; k.dept {
			k.unit = ws.dept
		} else {
			k.unit = ws.project
		}
		return k, true
	case InsufficientCapacity:
		if f.held { // the sentence names the pool and the head, not the numbers
			k.held, k.head, k.amount, k.bound = true, f.head, 0, 0
			k.sameProject = c.wls[f.head].project == ws.project
			return k, true
		}
		return k, f.pool >= 0
	case GangIncomplete:
		k.held = f.held
		return k, true
	case NoMatchingNodes:
		return k, true
	}
	return k, false
}

// buildMessage is the sentence a waiting workload shows for its failure (S23).
func (c *cycle) buildMessage(ws *wlState, f *failure, e *PendingWorkload) string {
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
		if f.held {
			return "Waiting for its controller to create its pods (" + strconv.FormatInt(f.amount, 10) +
				"); they fit in node pool " + pool + ", where work it would preempt or reclaim does not start meanwhile."
		}
		// Not how many exist: the sentence would change with every pod the controller makes,
		// and each change is written to every pod, the record and an event (S23).
		return "Waiting for all " + strconv.FormatInt(f.amount, 10) + " pods of the gang; it starts once its controller has created them all."
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
		if f.held {
			return "Held back in pool " + pool + " for " + c.wls[f.head].w.Name + ", which waits for " + c.heldFor(f.head) + " there and " + c.heldWhy(ws, f.head) +
				"; it starts once that one has started, or when more capacity is free."
		}
		if pool == "" {
			return "Not enough free capacity for " + gpus(e.RequestedGPUs) + "; it starts when other work finishes."
		}
		return "Not enough free capacity in pool " + pool + " for " + gpus(f.amount) + " (" +
			strconv.FormatInt(max(f.bound, 0), 10) + " free, or not on nodes that fit its pods); it starts when other work finishes."
	case TopologyUnsatisfiable:
		return topologySentence(f.topo, pool)
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
			c.domainNote(ws) + "; it starts when they are gone."
	case BehindStrictHead:
		return "The project queues strictly: waiting behind " + c.wls[f.head].w.Name +
			", which cannot start yet; it starts after that one does."
	}
	return string(f.reason)
}

// heldFor is what the claimant a workload is held back for waits for: capacity, or its pods
// (foreseen_pods.go).
func (c *cycle) heldFor(by int32) string {
	if c.awaitsPods(&c.wls[by]) {
		return "its controller to create its pods"
	}
	return "capacity"
}

// heldWhy says why a workload held back for another would be evicted by it once running.
func (c *cycle) heldWhy(ws *wlState, by int32) string {
	if c.wls[by].project == ws.project {
		return "would preempt it (higher priority in its project, S16)"
	}
	return "would reclaim it (inside its deserved quota, S17)"
}

// String names what held back evictions for a waiting workload, as the start estimate says it.
func (d delayKind) String() string {
	switch d {
	case preemptionDelay:
		return "its project's preemption delay"
	case reclaimRuntime:
		return "the reclaim minimum runtime of the borrowed work it could reclaim"
	case preemptionRuntime:
		return "the minimum runtime of the work it could preempt"
	}
	return ""
}

// delayNote adds to a waiting workload's sentence why nothing was evicted for it yet (S27).
func (c *cycle) delayNote(f *failure) string {
	if f.delay == noDelay {
		return ""
	}
	at := time.Unix(0, f.until).UTC().Format(time.RFC3339)
	switch f.delay {
	case preemptionDelay:
		return " Its project's " + HeldByDelayUntil + at + "."
	case reclaimRuntime:
		return " Borrowed work it could reclaim has run less than its project's reclaim minimum runtime; " + HeldByReclaimRuntimeUntil + at + "."
	case preemptionRuntime:
		return " Lower-priority work of its project has run less than the project's minimum runtime; " + HeldByMinRuntimeUntil + at + "."
	}
	return ""
}

// How a waiting workload's message ends when evictions for it are held back (delayNote),
// followed by when that ends (RFC 3339) and a full stop. The console reads them to say the
// same in its own words (web/workload_next_step.go).
const (
	HeldByDelayUntil          = "preemption delay lets it preempt or reclaim from "
	HeldByReclaimRuntimeUntil = "reclaim is possible from "
	HeldByMinRuntimeUntil     = "preemption is possible from "
)
