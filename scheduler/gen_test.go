package scheduler

import (
	"math/rand/v2"
	"strconv"
)

// genConfig sizes a random snapshot. Random snapshots are valid at the start: running pods
// fit their nodes, and no project or department is over its limit or over its deserved
// quota with non-preemptible work.
type genConfig struct {
	pools, nodes     int
	gpusPerNode      int64
	depts, projects  int
	running, pending int
	maxGang          int
	maxGPUs          int64 // per pod
	varied           bool  // selectors, taints, unready nodes, suspended and orphan workloads, strict queues...
}

type generator struct {
	rng  *rand.Rand
	cfg  genConfig
	s    Snapshot
	free []Resources
	// use[project or dept name][pool] = {alloc, allocNP}
	use map[string][][2]int64
}

func genSnapshot(seed uint64, cfg genConfig) *Snapshot {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), cfg: cfg, use: map[string][][2]int64{}}
	g.s = Snapshot{Now: minute(600), Priorities: seededPriorities(), Categories: seededCategories(), WorkloadTypes: seededTypes()}
	g.org()
	g.nodesAndPools()
	for i := range cfg.running {
		g.workload(i, true)
	}
	for i := range cfg.pending {
		g.workload(cfg.running+i, false)
	}
	return &g.s
}

func poolName(i int) string { return "pool" + strconv.Itoa(i) }

func (g *generator) nodesAndPools() {
	for p := range g.cfg.pools {
		np := NodePool{Name: poolName(p), LabelKey: "pool", LabelValue: poolName(p)}
		if p == 0 {
			np.LabelKey, np.LabelValue = "", "" // the catch-all
		}
		if g.rng.IntN(3) == 0 {
			np.Placement = Spread
		}
		g.s.NodePools = append(g.s.NodePools, np)
	}
	g.s.Nodes = make([]Node, g.cfg.nodes)
	g.free = make([]Resources, g.cfg.nodes)
	for i := range g.s.Nodes {
		r := Resources{MilliCPU: 64000, Memory: 512 * gi, GPUs: g.cfg.gpusPerNode, Pods: 110}
		n := Node{Name: "node-" + strconv.Itoa(i), Ready: true, Labels: map[string]string{}, Capacity: r, Allocatable: r}
		if p := g.rng.IntN(g.cfg.pools); p > 0 {
			n.Labels["pool"] = poolName(p)
		}
		n.Labels["zone"] = strconv.Itoa(g.rng.IntN(2))
		if g.cfg.varied {
			switch g.rng.IntN(20) {
			case 0:
				n.Ready = false
			case 1:
				n.Taints = []Taint{{Key: "dedicated", Value: "infer", Effect: "NoSchedule"}}
			case 2:
				n.Occupied = Resources{MilliCPU: 1000, Memory: gi, GPUs: 1, Pods: 1}
			}
		}
		g.s.Nodes[i] = n
		g.free[i] = r.sub(n.Occupied)
	}
}

func (g *generator) org() {
	quotas := func(deserved int64) map[string]Quota {
		q := map[string]Quota{}
		for p := range g.cfg.pools {
			d := deserved
			if g.cfg.varied {
				d = g.rng.Int64N(deserved + 1)
			}
			lim := NoLimit
			if g.rng.IntN(3) == 0 {
				lim = d + g.rng.Int64N(d+3)
			}
			q[poolName(p)] = Quota{Deserved: d, Limit: lim, OverQuotaWeight: g.rng.Int64N(4)}
		}
		return q
	}
	total := int64(g.cfg.nodes) * g.cfg.gpusPerNode
	perDept := max(total/int64(max(g.cfg.depts, 1))/int64(g.cfg.pools), 1)
	for d := range g.cfg.depts {
		dept := Department{Name: "dept-" + strconv.Itoa(d), Quotas: quotas(perDept)}
		if g.cfg.varied {
			dept.PriorityPolicy, dept.PriorityOffset = g.priorityPolicy()
		}
		g.s.Departments = append(g.s.Departments, dept)
	}
	perProject := max(total/int64(max(g.cfg.projects, 1))/int64(g.cfg.pools), 1)
	for p := range g.cfg.projects {
		proj := Project{Name: "proj-" + strconv.Itoa(p), Quotas: quotas(perProject)}
		if g.cfg.depts > 0 && g.rng.IntN(10) > 0 {
			proj.Department = "dept-" + strconv.Itoa(g.rng.IntN(g.cfg.depts))
		}
		if g.cfg.varied {
			if g.rng.IntN(4) == 0 {
				proj.Policy.Queueing = Strict
			}
			if g.rng.IntN(3) == 0 {
				proj.Policy.PreemptionOrder = NewestFirst
			}
			if g.rng.IntN(3) == 0 {
				proj.Policy.PreemptionMode = Suspend
			}
			if g.rng.IntN(4) == 0 {
				proj.Policy.MinRuntimeSeconds = 3600
			}
			if g.rng.IntN(5) == 0 {
				proj.Policy.MaxPriority = "high"
			}
			if g.cfg.pools > 1 && g.rng.IntN(2) == 0 {
				proj.NodePools = []string{poolName(g.rng.IntN(g.cfg.pools)), poolName(0)}
			}
			proj.PriorityPolicy, proj.PriorityOffset = g.priorityPolicy()
			if g.rng.IntN(4) == 0 {
				proj.Policy.ReclaimMinRuntimeSeconds = int64(g.rng.IntN(4)) * 3600
			}
			if g.rng.IntN(4) == 0 {
				proj.Policy.PreemptionDelaySeconds = int64(g.rng.IntN(4)) * 3600
			}
		}
		g.s.Projects = append(g.s.Projects, proj)
	}
}

// priorityPolicy draws an S25 policy: mostly fenced without offset, as most clusters are.
func (g *generator) priorityPolicy() (PriorityPolicy, int32) {
	pol := Fence
	if g.rng.IntN(3) == 0 {
		pol = Open
	}
	var offset int32
	if g.rng.IntN(4) == 0 {
		offset = int32(g.rng.IntN(301) - 150)
	}
	return pol, offset
}

var genPriorities = []string{"very-low", "low", "medium-low", "medium", "medium-high", "high", "very-high"}

// quotaRoom reports whether adding gpus to a project (and its department) in a pool keeps
// the snapshot valid, and records it if so.
func (g *generator) quotaRoom(proj *Project, pool string, poolIdx int, gpus int64, np bool) bool {
	type q struct {
		name  string
		quota Quota
	}
	qs := []q{{proj.Name, proj.Quotas[pool]}}
	for _, d := range g.s.Departments {
		if d.Name == proj.Department {
			qs = append(qs, q{d.Name, d.Quotas[pool]})
		}
	}
	for _, x := range qs {
		u := g.use[x.name]
		if u == nil {
			u = make([][2]int64, g.cfg.pools)
			g.use[x.name] = u
		}
		if x.quota.Limit >= 0 && u[poolIdx][0]+gpus > x.quota.Limit {
			return false
		}
		if np && u[poolIdx][1]+gpus > x.quota.Deserved {
			return false
		}
	}
	for _, x := range qs {
		g.use[x.name][poolIdx][0] += gpus
		if np {
			g.use[x.name][poolIdx][1] += gpus
		}
	}
	return true
}

func (g *generator) workload(i int, run bool) {
	rng := g.rng
	name := "w" + strconv.Itoa(i)
	w := Workload{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Pod", Type: "Standard training",
		Labels: map[string]string{}, Annotations: map[string]string{}, Phase: PhasePending,
		QueuedAt: minute(rng.IntN(500))}
	pi := rng.IntN(len(g.s.Projects))
	proj := &g.s.Projects[pi]
	w.Project = proj.Name
	w.Labels[LabelPriority] = genPriorities[rng.IntN(len(genPriorities))]
	switch rng.IntN(3) {
	case 0:
		w.Labels[LabelPreemptibility] = string(NonPreemptible)
	case 1:
		w.Labels[LabelPreemptibility] = string(Preemptible)
	}
	if rng.IntN(4) == 0 {
		w.Kind, w.Group = "Job", "batch"
	}
	pods := 1 + rng.IntN(g.cfg.maxGang)
	if pods > 1 && rng.IntN(3) > 0 {
		w.Annotations[AnnotationMinMembers] = strconv.Itoa(pods)
	}
	if g.cfg.varied && rng.IntN(6) == 0 { // elastic: a minimum, and replicas beyond it (S26)
		w.Labels[LabelPreemptibility] = string(SemiPreemptible)
		w.Annotations[AnnotationMinMembers] = strconv.Itoa(1 + rng.IntN(pods))
	}
	req := Resources{MilliCPU: 1000 * (1 + rng.Int64N(4)), Memory: gi * (1 + rng.Int64N(8)), GPUs: rng.Int64N(g.cfg.maxGPUs + 1)}
	if req.GPUs == 0 && rng.IntN(2) == 0 {
		req.GPUs = 1
	}
	var pod Pod
	if g.cfg.varied {
		switch rng.IntN(12) {
		case 0:
			pod.NodeSelector = map[string]string{"zone": strconv.Itoa(rng.IntN(3))}
		case 1:
			pod.Tolerations = []Toleration{{Key: "dedicated", Operator: "Exists"}}
		case 2:
			pod.RequiredAffinity = []NodeSelectorTerm{{MatchExpressions: []NodeSelectorRequirement{{Key: "zone", Operator: "In", Values: []string{"1"}}}}}
		}
	}
	w.Pods = make([]Pod, pods)
	for k := range w.Pods {
		p := pod
		p.Name = name + "-" + strconv.Itoa(k)
		p.UID = "uid-" + p.Name
		p.Namespace = "ns"
		p.Requests = req
		w.Pods[k] = p
	}
	if run {
		g.place(&w, proj)
	} else if g.cfg.varied {
		switch rng.IntN(15) {
		case 0:
			w.Project = ""
		case 1:
			w.Phase = PhaseSuspended
			for k := range w.Pods {
				w.Pods[k].UID = ""
			}
		case 2:
			w.Nominated = true
		case 3:
			w.Pods = w.Pods[:len(w.Pods)-1] // an incomplete gang, if it is one
		}
	}
	g.s.Workloads = append(g.s.Workloads, w)
}

// place binds a would-be running workload's pods first-fit from a random node, in one pool,
// if that keeps the snapshot valid; otherwise the workload stays pending.
func (g *generator) place(w *Workload, proj *Project) {
	// the Standard training type is preemptible unless labelled otherwise
	np := w.Labels[LabelPreemptibility] == string(NonPreemptible)
	poolIdx := g.rng.IntN(g.cfg.pools)
	pool := poolName(poolIdx)
	var gpus, npGPUs int64
	for _, p := range w.Pods {
		gpus += p.Requests.GPUs
	}
	if np {
		npGPUs = gpus
	}
	if w.Labels[LabelPreemptibility] == string(SemiPreemptible) {
		gang, _ := ResolveGangSize(w)
		npGPUs = int64(min(gang, len(w.Pods))) * w.Pods[0].Requests.GPUs // its minimum
	}
	if !g.quotaRoom(proj, pool, poolIdx, npGPUs, true) {
		return
	}
	if !g.quotaRoom(proj, pool, poolIdx, gpus-npGPUs, false) {
		g.quotaRoom(proj, pool, poolIdx, -npGPUs, true)
		return
	}
	start := g.rng.IntN(len(g.s.Nodes))
	chosen := make([]int, 0, len(w.Pods))
	for k := range w.Pods {
		req := w.Pods[k].Requests
		req.Pods = 1
		found := -1
		for j := range g.s.Nodes {
			n := (start + j) % len(g.s.Nodes)
			node := &g.s.Nodes[n]
			if node.Labels["pool"] != pool && !(poolIdx == 0 && node.Labels["pool"] == "") {
				continue
			}
			if node.Ready && g.free[n].covers(req) && allows(node, &w.Pods[k]) {
				found = n
				break
			}
		}
		if found < 0 {
			for m, n := range chosen { // undo
				r := w.Pods[m].Requests
				r.Pods = 1
				g.free[n] = g.free[n].Add(r)
			}
			g.quotaRoom(proj, pool, poolIdx, -npGPUs, true)
			g.quotaRoom(proj, pool, poolIdx, -(gpus - npGPUs), false)
			return
		}
		g.free[found] = g.free[found].sub(req)
		chosen = append(chosen, found)
	}
	w.Phase = PhaseRunning
	w.StartedAt = minute(g.rng.IntN(590))
	for k, n := range chosen {
		w.Pods[k].NodeName = g.s.Nodes[n].Name
	}
	if g.cfg.varied && g.rng.IntN(40) == 0 {
		w.PreemptedBy = "uid-w" + strconv.Itoa(g.cfg.running+g.rng.IntN(max(g.cfg.pending, 1)))
		for k := range w.Pods {
			w.Pods[k].Terminating = true
		}
	}
}
