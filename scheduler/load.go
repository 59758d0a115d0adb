package scheduler

import (
	"cmp"
	"slices"
)

func sortedIndex[T any](xs []T, name func(*T) string) []int32 {
	idx := make([]int32, len(xs))
	for i := range idx {
		idx[i] = int32(i)
	}
	byName := func(a, b int32) int { return cmp.Compare(name(&xs[a]), name(&xs[b])) }
	// lists often come sorted (the Kubernetes side sorts nodes): checking is one comparison each
	if !slices.IsSortedFunc(idx, byName) {
		slices.SortStableFunc(idx, byName)
	}
	return idx
}

// load is phase 1: index the snapshot and resolve every workload.
func (c *cycle) load(s *Snapshot) {
	c.snap = s
	c.catalog = NewCatalog(s.Priorities, s.Categories, s.WorkloadTypes)
	poolIdx := c.loadPools(s)
	nodeIdx := c.loadNodes(s)
	c.loadOrg(s, poolIdx)
	c.loadWorkloads(s, nodeIdx)
	c.loadReservations(s, nodeIdx)
	c.buildBuckets()
}

func (c *cycle) loadPools(s *Snapshot) map[string]int32 {
	order := sortedIndex(s.NodePools, func(p *NodePool) string { return p.Name })
	c.pools = make([]poolState, len(order))
	idx := make(map[string]int32, len(order))
	for i, o := range order {
		p := &s.NodePools[o]
		c.pools[i] = poolState{pool: p, spread: p.Placement == Spread}
		idx[p.Name] = int32(i)
	}
	return idx
}

// poolOf gives the pool whose label the node carries (first by name), else the catch-all pool.
func (c *cycle) poolOf(n *Node) int32 {
	return int32(poolIndex(n, len(c.pools), func(i int) *NodePool { return c.pools[i].pool }))
}

// poolIndex is the node→pool rule: of count pools sorted by name (pool(i) is the ith), the
// first whose label the node carries, else the first that selects no label (the catch-all),
// else -1.
func poolIndex(n *Node, count int, pool func(i int) *NodePool) int {
	catchAll := -1
	for i := range count {
		p := pool(i)
		if p.LabelKey == "" {
			if catchAll < 0 {
				catchAll = i
			}
			continue
		}
		if v, ok := n.Labels[p.LabelKey]; ok && v == p.LabelValue {
			return i
		}
	}
	return catchAll
}

// NodePoolOf is the name of the node pool a node belongs to, by the rule a cycle places nodes
// by; pools must be sorted by name. Empty when no pool takes the node.
func NodePoolOf(pools []NodePool, n *Node) string {
	if i := poolIndex(n, len(pools), func(i int) *NodePool { return &pools[i] }); i >= 0 {
		return pools[i].Name
	}
	return ""
}

func (c *cycle) loadNodes(s *Snapshot) map[string]int32 {
	order := sortedIndex(s.Nodes, func(n *Node) string { return n.Name })
	c.nodes = make([]nodeState, len(order))
	idx := make(map[string]int32, len(order))
	for i, o := range order {
		n := &s.Nodes[o]
		ns := &c.nodes[i]
		*ns = nodeState{node: n, pool: c.poolOf(n), usable: n.Ready && !n.Unschedulable, untainted: true,
			free: n.Allocatable.sub(n.Occupied)}
		for _, t := range n.Taints {
			if blocking(t) {
				ns.untainted = false
			}
		}
		if ns.pool >= 0 {
			p := &c.pools[ns.pool]
			ns.pos = int32(len(p.nodes))
			p.nodes = append(p.nodes, int32(i))
		}
		idx[n.Name] = int32(i)
	}
	return idx
}

func normalQuota(q Quota, ok bool) Quota {
	if !ok {
		return DefaultQuota()
	}
	if q.Limit >= 0 && q.Limit < q.Deserved {
		q.Limit = q.Deserved
	}
	return q
}

func (c *cycle) newGroup(name string, quotas map[string]Quota, slab []share) group {
	g := group{name: name, shares: slab, heapPos: -1}
	for i := range c.pools {
		q, ok := quotas[c.pools[i].pool.Name]
		g.shares[i].quota = normalQuota(q, ok)
	}
	return g
}

func (c *cycle) loadOrg(s *Snapshot, poolIdx map[string]int32) {
	nPools := len(c.pools)
	allPools := make([]int32, nPools)
	for i := range allPools {
		allPools[i] = int32(i)
	}
	deptOrder := sortedIndex(s.Departments, func(d *Department) string { return d.Name })
	// the last department stands in for projects that name none
	c.depts = make([]deptState, len(deptOrder)+1)
	slab := make([]share, (len(c.depts)+len(s.Projects))*nPools)
	deptIdx := make(map[string]int32, len(deptOrder))
	for i, o := range deptOrder {
		d := &s.Departments[o]
		c.depts[i].group = c.newGroup(d.Name, d.Quotas, slab[i*nPools:(i+1)*nPools])
		c.depts[i].open, c.depts[i].offset = d.PriorityPolicy == Open, int64(d.PriorityOffset)
		deptIdx[d.Name] = int32(i)
	}
	none := int32(len(deptOrder))
	c.depts[none] = deptState{group: group{shares: slab[int(none)*nPools : int(none+1)*nPools], heapPos: -1}, unbounded: true}
	for i := range c.depts[none].shares {
		c.depts[none].shares[i].quota = Quota{Limit: NoLimit}
	}
	slab = slab[len(c.depts)*nPools:]

	projOrder := sortedIndex(s.Projects, func(p *Project) string { return p.Name })
	policyClasses := policyClasses{resolvePolicy{}: 0} // workloads without a project have the zero policy
	c.projects = make([]projectState, len(projOrder))
	for i, o := range projOrder {
		p := &s.Projects[o]
		ps := &c.projects[i]
		ps.pools = allPools
		if len(p.NodePools) > 0 {
			ps.pools = make([]int32, 0, len(p.NodePools))
			for _, name := range p.NodePools {
				if pi, ok := poolIdx[name]; ok {
					ps.pools = append(ps.pools, pi)
				}
			}
		}
		ps.group = c.newGroup(p.Name, p.Quotas, slab[i*nPools:(i+1)*nPools])
		ps.open, ps.offset = p.PriorityPolicy == Open, int64(p.PriorityOffset)
		ps.policy = p.Policy
		ps.policyClass = policyClasses.of(p.Policy)
		ps.ranked = make([][]int32, nPools)
		d, ok := deptIdx[p.Department]
		if !ok {
			d = none
		}
		ps.dept = d
		if d == none {
			// the stand-in department is as large as its projects in the pools they use, so
			// it never binds them and is ordered in each pool by what is there (S11)
			nd := &c.depts[none]
			for _, pi := range ps.pools {
				nd.shares[pi].quota.Deserved += ps.shares[pi].quota.Deserved
				nd.shares[pi].quota.OverQuotaWeight += ps.shares[pi].quota.OverQuotaWeight
			}
		}
	}
	c.projectIndex = make(map[string]int32, len(projOrder))
	for i := range c.projects {
		c.projectIndex[c.projects[i].name] = int32(i)
	}
}

// loadIn is what loading works out for one workload from it alone: its project, its
// resolution (in the memo of the half of the workloads it was in) and its gang size.
type loadIn struct {
	project, res, gang int32
	gangWarnings       bool
}

// parallelLoad is the number of workloads from which their lookups are shared between two
// goroutines: below it, starting one costs more than it saves.
var parallelLoad = 4096

// prepare works out loadIn for workloads [lo, hi) and the nodes their pods are bound to
// (podNode, at podAt), resolving in m. It only reads the cycle and the snapshot.
func (c *cycle) prepare(s *Snapshot, lo, hi int, m *resolveMemo, in []loadIn, podAt, podNode []int32, nodeIdx map[string]int32) {
	last := int32(-1) // workloads of a project tend to come together: the latest is tried first
	for i := lo; i < hi; i++ {
		w := &s.Workloads[i]
		if w.Phase == PhaseCompleted || w.Phase == PhaseFailed {
			continue
		}
		j := last
		if j < 0 || c.projects[j].name != w.Project {
			var ok bool
			if j, ok = c.projectIndex[w.Project]; !ok {
				j = -1
			} else {
				last = j
			}
		}
		gang, warnings := ResolveGangSize(w)
		in[i] = loadIn{project: j, res: c.resolveIn(m, w, j), gang: int32(gang), gangWarnings: len(warnings) > 0}
		for k := range w.Pods {
			podNode[int(podAt[i])+k] = nodeOf(nodeIdx, &w.Pods[k])
		}
	}
}

// Where a pod is: on the node of that index, or nodeNone (not bound) or nodeGone (bound to
// a node that is not in the snapshot).
const (
	nodeNone int32 = -1
	nodeGone int32 = -2
)

func nodeOf(nodeIdx map[string]int32, p *Pod) int32 {
	if p.NodeName == "" {
		return nodeNone
	}
	if n, ok := nodeIdx[p.NodeName]; ok {
		return n
	}
	return nodeGone
}

func (c *cycle) loadWorkloads(s *Snapshot, nodeIdx map[string]int32) {
	n := len(s.Workloads)
	podAt := reuse(c.scratch.podAt, n+1)[:n+1] // where each workload's pods start among all pods
	total := 0
	for i := range s.Workloads {
		podAt[i] = int32(total)
		total += len(s.Workloads[i].Pods)
	}
	podAt[n] = int32(total)
	in := reuse(c.scratch.in, n)[:n]
	podNode := reuse(c.scratch.podNode, total)[:total]
	c.scratch.podAt, c.scratch.in, c.scratch.podNode = podAt, in, podNode

	// What each workload needs from itself alone is worked out first, the two halves at once
	// when there are many: it is most of loading, reading the snapshot's workloads and their
	// labels. The second half resolves in a memo of its own, merged into the first after.
	mid := n
	var second resolveMemo
	var atFirst []int32 // where the second half's resolutions are in the first's memo
	if n >= parallelLoad {
		mid = n / 2
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.prepare(s, mid, n, &second, in, podAt, podNode, nodeIdx)
		}()
		c.prepare(s, 0, mid, &c.memo, in, podAt, podNode, nodeIdx)
		<-done
		atFirst = c.memo.merge(&second)
	} else {
		c.prepare(s, 0, n, &c.memo, in, podAt, podNode, nodeIdx)
	}
	c.resolutions = c.memo.resolutions

	c.wls = reuse(c.scratch.wls, len(s.Workloads))
	c.pods = reuse(c.scratch.pods, total)
	gangs := reuse(c.scratch.gangs, len(s.Workloads)) // by workload loaded, as c.wls
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.Phase == PhaseCompleted || w.Phase == PhaseFailed {
			continue
		}
		wi := int32(len(c.wls))
		ws := wlState{w: w, project: -1, dept: -1, pend: -1, suspended: w.Phase == PhaseSuspended,
			start: w.StartedAt.UnixNano()}
		if j := in[i].project; j >= 0 {
			ws.project, ws.dept = j, c.projects[j].dept
		}
		res := in[i].res
		if i >= mid {
			res = atFirst[res]
		}
		c.useResolution(&ws, res)
		// the gang size matters only while pods are pending (pendState), its warnings always
		if in[i].gangWarnings {
			_, warnings := ResolveGangSize(w)
			c.plan.Warnings = append(c.plan.Warnings, warnings...)
		}
		if c.resolutions[ws.res].semi && !ws.suspended {
			c.loadSemi(ws, nodeIdx)
		} else {
			ws.firstPod = int32(len(c.pods))
			c.wls = append(c.wls, ws)
			for k := range w.Pods {
				c.loadPod(wi, &w.Pods[k], podNode[int(podAt[i])+k])
			}
			c.wls[wi].pods = int32(len(c.pods)) - c.wls[wi].firstPod
		}
		if asksTopology(w) || len(w.TopologyProblems) > 0 {
			c.topologyWarnings(w)
			for x := wi; x < int32(len(c.wls)); x++ {
				c.topoWls = append(c.topoWls, x) // both parts of a semi-preemptible one (S26)
			}
		}
		for len(gangs) < len(c.wls) {
			gangs = append(gangs, in[i].gang)
		}
	}
	c.scratch.gangs = gangs
	// Count first, so that each of the following is allocated once, at its size.
	nPools := len(c.pools)
	nPending, nRunning, nRanked := 0, 0, 0
	rankedCap := make([]int32, len(c.projects)*nPools) // bound pods: at least the entries of a ranked list
	for wi := range c.wls {
		ws := &c.wls[wi]
		if ws.pendingPods > 0 {
			nPending++
		}
		if !ws.running {
			continue
		}
		nRunning++
		for k := ws.firstPod; ws.project >= 0 && k < ws.firstPod+ws.pods; k++ {
			if ps := &c.pods[k]; ps.bound && !ps.terminating && c.nodes[ps.node].pool >= 0 {
				rankedCap[int(ws.project)*nPools+int(c.nodes[ps.node].pool)]++
				nRanked++
			}
		}
	}
	c.pend = reuse(c.scratch.pend, nPending)
	for wi := range c.wls {
		if ws := &c.wls[wi]; ws.pendingPods > 0 {
			ws.pend = int32(len(c.pend))
			gang := 1 // replicas beyond a minimum go one by one (S26)
			if !c.isExtra(ws) {
				gang = int(gangs[wi])
			}
			w := ws.w
			c.pend = append(c.pend, pendState{queued: w.QueuedAt.UnixNano(), gang: gang,
				preempted: w.PreemptedBy != "", nominated: w.Nominated, topology: asksTopology(w),
				foreseen: foreseesPods(w, c.snap.Now)})
		}
	}
	slab := reuse(c.scratch.ranked, nRanked)[:nRanked]
	c.scratch.ranked = slab
	for i, n := range rankedCap {
		c.projects[i/nPools].ranked[i%nPools] = slab[:0:n]
		slab = slab[n:]
	}
	c.runningOrder = reuse(c.scratch.runningOrder, nRunning)
}

// loadPod adds a workload's pod, bound to node n (an index, nodeNone or nodeGone).
func (c *cycle) loadPod(wi int32, pod *Pod, n int32) {
	ws := &c.wls[wi]
	ps := podState{pod: pod, wl: wi, node: -1, req: pod.Requests, constrained: constrained(pod)}
	ps.req.Pods = 1 // every pod takes one slot whatever it says
	switch {
	case ws.suspended:
		ws.pendingPods++
	case pod.Foreseen:
		if !foreseesPods(ws.w, c.snap.Now) {
			return // foreseen no longer: its controller has not made it in time (foreseen_pods.go)
		}
		ws.pendingPods++
	case n == nodeGone:
		return // bound to a node that is gone: it holds nothing we schedule
	case n != nodeNone:
		// A pod of a victim whose eviction is in flight terminates, whether it already has its
		// deletion mark or its owner was suspended and its controller has yet to delete it
		// (S19, S20): it holds its node, and the victim is not chosen again.
		ps.node, ps.bound, ps.terminating = n, true, pod.Terminating || ws.w.PreemptedBy != ""
		c.nodes[n].free = c.nodes[n].free.sub(ps.req)
		if ps.terminating {
			ws.terminating = true
			break
		}
		ws.running = true
		ws.boundGPUs += ps.req.GPUs
		pool := c.nodes[n].pool
		c.account(wi, pool, ps.req.GPUs)
		c.addRunning(wi, pool, ps.req.GPUs)
	case !pod.Terminating:
		ws.pendingPods++
	}
	c.pods = append(c.pods, ps)
}

// account adds GPUs (negative to take them away) to the workload's project and department in a pool.
func (c *cycle) account(wi, pool int32, gpus int64) {
	ws := &c.wls[wi]
	if ws.project < 0 {
		return
	}
	c.accountTo(ws.project, ws.dept, ws.preemptible, pool, gpus)
}

// accountTo adds GPUs to a project's and its department's allocation in a pool.
func (c *cycle) accountTo(project, dept int32, preemptible bool, pool int32, gpus int64) {
	if pool < 0 {
		return
	}
	for _, g := range [2]*group{&c.projects[project].group, &c.depts[dept].group} {
		sh := &g.shares[pool]
		sh.alloc += gpus
		if !preemptible {
			sh.allocNP += gpus
		}
	}
}

// addRunning changes the running base of borrowing (S17).
func (c *cycle) addRunning(wi, pool int32, gpus int64) {
	ws := &c.wls[wi]
	if pool < 0 || ws.project < 0 {
		return
	}
	c.projects[ws.project].shares[pool].running += gpus
	c.depts[ws.dept].shares[pool].running += gpus
}

// gpusIn is the GPUs a workload's bound pods hold in a pool.
func (c *cycle) gpusIn(wi, pool int32) int64 {
	ws := &c.wls[wi]
	var n int64
	for k := ws.firstPod; k < ws.firstPod+ws.pods; k++ {
		ps := &c.pods[k]
		if ps.bound && !ps.terminating && c.nodes[ps.node].pool == pool {
			n += ps.req.GPUs
		}
	}
	return n
}

func (c *cycle) buildBuckets() {
	for pi := range c.pools {
		p := &c.pools[pi]
		var maxGPUs int64
		for _, n := range p.nodes {
			if ns := &c.nodes[n]; ns.usable {
				maxGPUs = max(maxGPUs, ns.node.Allocatable.GPUs)
			}
		}
		words := (len(p.nodes) + 63) / 64
		slab := make([]uint64, int(maxGPUs+1)*words)
		p.buckets = make([][]uint64, maxGPUs+1)
		p.bucketLen, p.firstWord = make([]int32, maxGPUs+1), make([]int32, maxGPUs+1)
		p.marks = make([][]skipMark, maxGPUs+1)
		roomSlab := make([]Resources, int(maxGPUs+1)*words)
		p.room = make([][]Resources, maxGPUs+1)
		for g := range p.room {
			p.room[g] = roomSlab[g*words : (g+1)*words]
		}
		for g := range p.buckets {
			p.buckets[g] = slab[g*words : (g+1)*words]
		}
		for _, n := range p.nodes {
			ns := &c.nodes[n]
			if !ns.usable {
				continue
			}
			p.setBit(p.bucketOf(ns.free.GPUs), int(ns.pos), ns.free)
			p.freeGPUs += max(ns.free.GPUs, 0)
			if ns.untainted && !slices.Contains(p.shapes, ns.node.Allocatable) {
				p.shapes = append(p.shapes, ns.node.Allocatable)
			}
		}
	}
}
