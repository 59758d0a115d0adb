package scheduler

import (
	"maps"
	"slices"
	"strings"
)

// Outcome is what a dry run predicts for a hypothetical workload (docs/scheduling.md "Dry run").
type Outcome string

const (
	StartNow             Outcome = "start-now"              // every pod fits on free capacity now
	StartAfterPreemption Outcome = "start-after-preemption" // once lower-priority work of its project is evicted (S16)
	StartAfterReclaim    Outcome = "start-after-reclaim"    // once other projects' borrowed GPUs are reclaimed (S17)
	Wait                 Outcome = "wait"                   // it would queue, for Reason
)

// Victim is a running workload a dry run would evict.
type Victim struct {
	WorkloadID string // UID of the top owner
	Namespace  string
	Name       string
	Project    string
	Priority   Priority
	Rule       Rule
	GPUs       int64
}

// Prediction is what the next cycle would do with a workload submitted now.
type Prediction struct {
	Outcome  Outcome
	NodePool string   // the pool it would start in; empty when it waits
	Nodes    []string // where its pods would go (bound, or set aside behind evictions), sorted
	// QueuePosition is its place in its project's queue while it waits or waits for its
	// victims to go (1 is next); 0 when it starts now or has no project.
	QueuePosition  int
	Reason         Reason // empty for start-now; WaitingForEvictions after evictions
	Message        string
	Priority       Priority
	Preemptibility Preemptibility
	Victims        []Victim // in the order the plan evicts them
	// PodsPending is how many of its pods would still wait once the others started (a
	// workload placed pod by pod, such as a Deployment, may start in part).
	PodsPending int
	// Start is when it would start: now unless it waits, else as EstimateStarts foresees it
	// (ForeseeStart); zero when not estimated.
	Start Estimate
	// Topology is the domain it (or each of its pod sets) would land in when it asks for a
	// topology (S29), bound or set aside behind its victims; TopologyUnsatisfiable's message
	// names the level and the emptiest domain when it would wait.
	Topology []TopologyPlacement
}

// Foresee runs one cycle (Plan) over the snapshot with w added, as a newly submitted workload,
// and says what would happen to w. The snapshot is not modified: the cycle sees a copy of its
// workload list with w appended (the rest is shared, as Plan only reads it). w's UID must not be
// one of the snapshot's; its pods should name themselves so that their binds can be told apart.
//
// The whole cycle runs, not only w's attempt: what else waits may be admitted first (a higher
// priority in w's project, a project further below its fair share), exactly as the scheduler
// would order them.
func (s *Snapshot) Foresee(w Workload) Prediction {
	cp := *s
	cp.Workloads = make([]Workload, len(s.Workloads), len(s.Workloads)+1)
	copy(cp.Workloads, s.Workloads)
	cp.Workloads = append(cp.Workloads, w)
	plan := cp.Plan()
	return predictionOf(&cp, &w, &plan)
}

// predictionOf reads w's fate out of a plan.
func predictionOf(s *Snapshot, w *Workload, plan *Plan) Prediction {
	var p Prediction
	nodes := map[string]bool{}
	bound := 0
	for _, b := range plan.Binds {
		if b.Workload == w.UID {
			nodes[b.Node] = true
			bound++
		}
	}
	var reclaims, preemptions int
	for _, e := range plan.Evictions {
		if e.Preemptor != w.UID {
			continue
		}
		p.Victims = append(p.Victims, Victim{WorkloadID: e.Workload, Namespace: e.Namespace, Name: e.Name,
			Project: e.Project, Rule: e.Rule, GPUs: e.GPUs})
		if e.Rule == RuleReclaim {
			reclaims++
		} else {
			preemptions++
		}
	}
	i := slices.IndexFunc(plan.Pending, func(e PendingWorkload) bool { return e.Workload == w.UID })
	if i >= 0 {
		e := &plan.Pending[i]
		p.Reason, p.Message, p.QueuePosition = e.Reason, e.Message, e.QueuePosition
		p.Priority, p.Preemptibility = e.Priority, e.Preemptibility
		for _, n := range e.NominatedNodes {
			nodes[n] = true
		}
		p.PodsPending = len(w.Pods) - bound
	}
	switch {
	case reclaims > 0 && (preemptions == 0 || p.Victims[0].Rule == RuleReclaim):
		// a workload placed pod by pod may need both rules: the first eviction names the outcome
		p.Outcome = StartAfterReclaim
	case len(p.Victims) > 0:
		p.Outcome = StartAfterPreemption
	case bound > 0:
		p.Outcome = StartNow
	default:
		p.Outcome = Wait
		clear(nodes)
	}
	if p.Outcome != Wait {
		for _, tp := range plan.Topology {
			if tp.Workload == w.UID {
				p.Topology = append(p.Topology, tp)
			}
		}
	}
	p.Nodes = slices.Sorted(maps.Keys(nodes))
	if len(p.Nodes) > 0 {
		p.NodePool = poolOfNode(s, p.Nodes[0])
	}
	catalog := NewCatalog(s.Priorities, s.Categories, s.WorkloadTypes)
	if i < 0 { // it starts: resolve what the report would have said
		r := catalog.Resolve(w, projectPolicy(s, w.Project))
		p.Priority, p.Preemptibility = r.Priority, r.Preemptibility
	}
	if len(p.Victims) > 0 {
		byUID := make(map[string]int, len(p.Victims))
		for k, v := range p.Victims {
			byUID[v.WorkloadID] = k
		}
		for k := range s.Workloads {
			v := &s.Workloads[k]
			if j, ok := byUID[v.UID]; ok {
				p.Victims[j].Priority, _ = catalog.ResolvePriority(v, projectPolicy(s, v.Project))
			}
		}
	}
	return p
}

// projectPolicy is the named project's policy; the default policy when there is none.
func projectPolicy(s *Snapshot, name string) Policy {
	for i := range s.Projects {
		if s.Projects[i].Name == name {
			return s.Projects[i].Policy
		}
	}
	return Policy{}
}

// poolOfNode is the pool of a node by name, by the rule a cycle places nodes by.
func poolOfNode(s *Snapshot, name string) string {
	i := slices.IndexFunc(s.Nodes, func(n Node) bool { return n.Name == name })
	if i < 0 {
		return ""
	}
	pools := slices.Clone(s.NodePools)
	slices.SortStableFunc(pools, func(a, b NodePool) int { return strings.Compare(a.Name, b.Name) })
	return NodePoolOf(pools, &s.Nodes[i])
}

// ForeseeStart is the start estimate (EstimateStarts) of w, submitted now: how the waiting
// outcome of a dry run is told in time. It costs a whole estimate pass.
func (s *Snapshot) ForeseeStart(w Workload, in EstimateInput) Estimate {
	cp := *s
	cp.Workloads = make([]Workload, len(s.Workloads), len(s.Workloads)+1)
	copy(cp.Workloads, s.Workloads)
	cp.Workloads = append(cp.Workloads, w)
	return cp.EstimateStarts(in)[w.UID]
}
