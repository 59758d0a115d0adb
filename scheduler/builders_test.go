package scheduler

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Fluent builders for snapshots in tests. Names are short on purpose: a table row should read
// like the situation it describes.

var t0 = time.Date(2025, 11, 1, 8, 0, 0, 0, time.UTC)

func minute(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

const gi = int64(1) << 30

func seededPriorities() []Priority {
	return []Priority{{"very-low", 25}, {"low", 40}, {"medium-low", 65}, {"medium", 80},
		{"medium-high", 90}, {"high", 125}, {"very-high", 150}}
}

func seededCategories() []Category {
	return []Category{
		{Name: "Build", DefaultPriority: "high", DefaultPreemptibility: NonPreemptible},
		{Name: "Train", DefaultPriority: "low", DefaultPreemptibility: Preemptible},
		{Name: "Deploy", DefaultPriority: "very-high", DefaultPreemptibility: NonPreemptible},
	}
}

func seededTypes() []WorkloadType {
	return []WorkloadType{
		{Name: "Workspace", Category: "Build"},
		{Name: "Standard training", Category: "Train"},
		{Name: "Distributed training", Category: "Train"},
		{Name: "Custom inference", Category: "Deploy"},
		{Name: "Job", Group: "batch", Category: "Build"},
		{Name: "PyTorchJob", Group: "kubeflow.org", Category: "Train"},
		{Name: "Deployment", Group: "apps", Category: "Deploy"},
		{Name: "Pod", Category: "Deploy"},
		{Name: "SPOTRequest"},
	}
}

type snapB struct{ s Snapshot }

// snap starts a snapshot with the seeded dictionary, categories and types and one catch-all
// node pool, "default", at minute 60.
func snap() *snapB {
	return &snapB{s: Snapshot{
		Now:           minute(60),
		Priorities:    seededPriorities(),
		Categories:    seededCategories(),
		WorkloadTypes: seededTypes(),
		NodePools:     []NodePool{{Name: "default"}},
	}}
}

func (b *snapB) pool(name, key, value string, placement Placement) *snapB {
	b.s.NodePools = append(b.s.NodePools, NodePool{Name: name, LabelKey: key, LabelValue: value, Placement: placement})
	return b
}

func (b *snapB) spread() *snapB {
	b.s.NodePools[0].Placement = Spread
	return b
}

func (b *snapB) node(nodes ...*nodeB) *snapB {
	for _, n := range nodes {
		b.s.Nodes = append(b.s.Nodes, n.n)
	}
	return b
}

// gpuNodes adds count ready nodes of the given GPUs, named prefix1, prefix2, ...
func (b *snapB) gpuNodes(prefix string, count int, gpus int64) *snapB {
	for i := 1; i <= count; i++ {
		b.node(node(prefix + strconv.Itoa(i)).gpus(gpus))
	}
	return b
}

func (b *snapB) dept(name string, deserved, limit int64) *snapB {
	b.s.Departments = append(b.s.Departments, Department{Name: name,
		Quotas: map[string]Quota{"default": {Deserved: deserved, Limit: limit, OverQuotaWeight: 2}}})
	return b
}

func (b *snapB) project(ps ...*projB) *snapB {
	for _, p := range ps {
		b.s.Projects = append(b.s.Projects, p.p)
	}
	return b
}

func (b *snapB) wl(ws ...*wlB) *snapB {
	for _, w := range ws {
		b.s.Workloads = append(b.s.Workloads, w.build())
	}
	return b
}

func (b *snapB) at(m int) *snapB {
	b.s.Now = minute(m)
	return b
}

func (b *snapB) build() *Snapshot { return &b.s }

type nodeB struct{ n Node }

func node(name string) *nodeB {
	r := Resources{MilliCPU: 64000, Memory: 512 * gi, Pods: 110}
	return &nodeB{n: Node{Name: name, Ready: true, Labels: map[string]string{}, Capacity: r, Allocatable: r}}
}

func (n *nodeB) gpus(g int64) *nodeB {
	n.n.Capacity.GPUs, n.n.Allocatable.GPUs = g, g
	return n
}

func (n *nodeB) cpu(milli int64) *nodeB {
	n.n.Capacity.MilliCPU, n.n.Allocatable.MilliCPU = milli, milli
	return n
}

func (n *nodeB) label(k, v string) *nodeB {
	n.n.Labels[k] = v
	return n
}

func (n *nodeB) taint(k, v, effect string) *nodeB {
	n.n.Taints = append(n.n.Taints, Taint{Key: k, Value: v, Effect: effect})
	return n
}

func (n *nodeB) notReady() *nodeB {
	n.n.Ready = false
	return n
}

func (n *nodeB) cordoned() *nodeB {
	n.n.Unschedulable = true
	return n
}

func (n *nodeB) occupied(gpus int64) *nodeB {
	n.n.Occupied.GPUs = gpus
	return n
}

type projB struct{ p Project }

// project makes a project with deserved GPUs in pool "default", no limit, weight 2.
func project(name string, deserved int64) *projB {
	return &projB{p: Project{Name: name,
		Quotas: map[string]Quota{"default": {Deserved: deserved, Limit: NoLimit, OverQuotaWeight: 2}}}}
}

func (p *projB) quota(pool string, deserved, limit, weight int64) *projB {
	p.p.Quotas[pool] = Quota{Deserved: deserved, Limit: limit, OverQuotaWeight: weight}
	return p
}

func (p *projB) limit(l int64) *projB {
	q := p.p.Quotas["default"]
	q.Limit = l
	p.p.Quotas["default"] = q
	return p
}

func (p *projB) weight(w int64) *projB {
	q := p.p.Quotas["default"]
	q.OverQuotaWeight = w
	p.p.Quotas["default"] = q
	return p
}

func (p *projB) dept(d string) *projB        { p.p.Department = d; return p }
func (p *projB) pools(ps ...string) *projB   { p.p.NodePools = ps; return p }
func (p *projB) policy(pol Policy) *projB    { p.p.Policy = pol; return p }
func (p *projB) strict() *projB              { p.p.Policy.Queueing = Strict; return p }
func (p *projB) minRuntime(s int64) *projB   { p.p.Policy.MinRuntimeSeconds = s; return p }
func (p *projB) newestFirst() *projB         { p.p.Policy.PreemptionOrder = NewestFirst; return p }
func (p *projB) suspendMode() *projB         { p.p.Policy.PreemptionMode = Suspend; return p }
func (p *projB) defaultPrio(n string) *projB { p.p.Policy.DefaultPriority = n; return p }

type wlB struct {
	w     Workload
	count int
	req   Resources
	nodes []string
	pod   Pod      // template for every pod
	sets  []string // the pod set of each pod, in order (S29); empty for none
	made  int      // with PodsDue set, the pods made; the others are foreseen
}

// wl makes a one-pod, one-GPU "Standard training" workload queued at minute 0.
func wl(name string) *wlB {
	return &wlB{
		w: Workload{UID: "uid-" + name, Namespace: "ns", Name: name, Kind: "Pod", Type: "Standard training",
			Labels: map[string]string{}, Annotations: map[string]string{}, Phase: PhasePending, QueuedAt: t0},
		count: 1,
		req:   Resources{MilliCPU: 1000, Memory: gi, GPUs: 1},
	}
}

func (b *wlB) in(project string) *wlB { b.w.Project = project; return b }
func (b *wlB) prio(name string) *wlB  { b.w.Labels[LabelPriority] = name; return b }
func (b *wlB) np() *wlB               { b.w.Labels[LabelPreemptibility] = string(NonPreemptible); return b }
func (b *wlB) preemptible() *wlB      { b.w.Labels[LabelPreemptibility] = string(Preemptible); return b }
func (b *wlB) gpus(g int64) *wlB      { b.req.GPUs = g; return b }
func (b *wlB) cpu(milli int64) *wlB   { b.req.MilliCPU = milli; return b }
func (b *wlB) pods(n int) *wlB        { b.count = n; return b }
func (b *wlB) queued(m int) *wlB      { b.w.QueuedAt = minute(m); return b }
func (b *wlB) typ(t string) *wlB      { b.w.Type = t; return b }
func (b *wlB) kind(k, g string) *wlB  { b.w.Kind, b.w.Group = k, g; return b }
func (b *wlB) nominated() *wlB        { b.w.Nominated = true; return b }

// gang sets the min-members annotation.
func (b *wlB) gang(n int) *wlB {
	b.w.Annotations[AnnotationMinMembers] = strconv.Itoa(n)
	return b
}

// on binds the pods, in order, to the nodes and marks the workload Running since minute m.
func (b *wlB) on(m int, nodes ...string) *wlB {
	b.nodes = nodes
	b.w.Phase = PhaseRunning
	b.w.StartedAt = minute(m)
	return b
}

func (b *wlB) suspended() *wlB { b.w.Phase = PhaseSuspended; return b }

// foreseen says its controller has made only the first made of its pods: the others are
// foreseen from its template until minute due (foreseen_pods.go).
func (b *wlB) foreseen(made, due int) *wlB {
	b.made, b.w.PodsDue = made, minute(due)
	return b
}

// terminating marks the bound pods as terminating, evicted for the preemptor.
func (b *wlB) terminating(preemptor string) *wlB {
	b.w.PreemptedBy = "uid-" + preemptor
	b.pod.Terminating = true
	return b
}

// beingSuspended: an earlier cycle suspended this workload's owner for preemptor (S20), and
// its pods still run until the owner's controller deletes them.
func (b *wlB) beingSuspended(preemptor string) *wlB {
	b.w.PreemptedBy = "uid-" + preemptor
	return b
}

func (b *wlB) selector(k, v string) *wlB {
	if b.pod.NodeSelector == nil {
		b.pod.NodeSelector = map[string]string{}
	}
	b.pod.NodeSelector[k] = v
	return b
}

func (b *wlB) affinity(reqs ...NodeSelectorRequirement) *wlB {
	b.pod.RequiredAffinity = append(b.pod.RequiredAffinity, NodeSelectorTerm{MatchExpressions: reqs})
	return b
}

func (b *wlB) tolerate(t Toleration) *wlB {
	b.pod.Tolerations = append(b.pod.Tolerations, t)
	return b
}

func (b *wlB) build() Workload {
	w := b.w
	w.Pods = make([]Pod, b.count)
	for i := range w.Pods {
		p := b.pod
		p.Name = w.Name + "-" + strconv.Itoa(i)
		p.UID = "uid-" + p.Name
		p.Namespace = w.Namespace
		p.Requests = b.req
		if i < len(b.sets) {
			p.PodSet = b.sets[i]
		}
		if i < len(b.nodes) {
			p.NodeName = b.nodes[i]
		} else {
			p.Terminating = false
		}
		if w.Phase == PhaseSuspended {
			p.UID, p.NodeName = "", ""
		}
		if !w.PodsDue.IsZero() && i >= b.made {
			p.UID, p.Name, p.Foreseen = "", "", true
		}
		w.Pods[i] = p
	}
	return w
}

// Expected plan entries.

func bind(pod, nodeName string) Bind {
	wlName := pod[:strings.LastIndex(pod, "-")]
	return Bind{Workload: "uid-" + wlName, Pod: PodRef{UID: "uid-" + pod, Namespace: "ns", Name: pod}, Node: nodeName}
}

func evict(victim, project, preemptor string, rule Rule, gpus int64) Eviction {
	return Eviction{Workload: "uid-" + victim, Namespace: "ns", Name: victim, Project: project, Mode: Terminate,
		Preemptor: "uid-" + preemptor, Rule: rule, GPUs: gpus}
}

func pend(name, project string, reason Reason, pos int) PendingWorkload {
	return PendingWorkload{Workload: "uid-" + name, Namespace: "ns", Name: name, Project: project, Reason: reason, QueuePosition: pos}
}

// pendOn is a workload waiting for its victims, set to go to the nodes.
func pendOn(name, project string, pos int, nodes ...string) PendingWorkload {
	p := pend(name, project, WaitingForEvictions, pos)
	p.NominatedNodes = nodes
	p.NominatedGPUs = 1
	return p
}

func resume(name, project string, gpus int64) Resume {
	return Resume{Workload: "uid-" + name, Namespace: "ns", Name: name, Project: project, NodePool: "default", GPUs: gpus}
}

// checkPlan compares whole plans. Sections the expectation leaves nil (Running, Projects,
// Departments, Warnings, NodePools, Reservations, Topology) are not compared; pending workloads'
// priority, preemptibility, requested GPUs and message are compared only where the expectation
// gives a message; where their values came from is the resolution's tests' (resolve_from_test.go),
// not the rules'.
func checkPlan(t *testing.T, got, want Plan) {
	t.Helper()
	if want.Running == nil {
		got.Running = nil
	}
	if want.Projects == nil {
		got.Projects = nil
	}
	if want.Departments == nil {
		got.Departments = nil
	}
	if want.Warnings == nil {
		got.Warnings = nil
	}
	if want.NodePools == nil {
		got.NodePools = nil
	}
	if want.Reservations == nil {
		got.Reservations = nil
	}
	if want.Topology == nil {
		got.Topology = nil
	}
	opts := []cmp.Option{cmpopts.EquateEmpty(),
		cmpopts.IgnoreFields(PendingWorkload{}, "PriorityFrom", "PreemptibilityFrom"),
		cmpopts.IgnoreFields(RunningWorkload{}, "PriorityFrom", "PreemptibilityFrom")}
	detailed := false
	for _, p := range want.Pending {
		if p.Message != "" {
			detailed = true
		}
	}
	if !detailed {
		opts = append(opts, cmpopts.IgnoreFields(PendingWorkload{}, "Message", "Priority", "Preemptibility", "RequestedGPUs", "NominatedGPUs"))
	}
	if !slices.ContainsFunc(want.Pending, func(p PendingWorkload) bool { return p.EvictionsHeldBy != "" }) {
		opts = append(opts, cmpopts.IgnoreFields(PendingWorkload{}, "EvictionsFrom", "EvictionsHeldBy")) // said by heldUntil cases
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("plan mismatch (-want +got):\n%s", diff)
	}
}

// ruleCase is one row of a per-rule table test.
type ruleCase struct {
	name string
	snap *snapB
	want Plan
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkPlan(t, tc.snap.build().Plan(), tc.want)
		})
	}
}

// prioPolicy sets a project's S25 priority policy and offset.
func (p *projB) prioPolicy(pol PriorityPolicy, offset int32) *projB {
	p.p.PriorityPolicy, p.p.PriorityOffset = pol, offset
	return p
}

// deptPolicy sets the S25 priority policy and offset of the department named.
func (b *snapB) deptPolicy(name string, pol PriorityPolicy, offset int32) *snapB {
	for i := range b.s.Departments {
		if b.s.Departments[i].Name == name {
			b.s.Departments[i].PriorityPolicy, b.s.Departments[i].PriorityOffset = pol, offset
		}
	}
	return b
}

func (p *projB) reclaimMinRuntime(s int64) *projB { p.p.Policy.ReclaimMinRuntimeSeconds = s; return p }

// heldUntil is a waiting workload whose evictions are held back until minute m by what
// (a preemption delay or a minimum runtime: S16, S27).
func heldUntil(p PendingWorkload, m int, what string) PendingWorkload {
	p.EvictionsFrom, p.EvictionsHeldBy = minute(m), what
	return p
}
func (p *projB) preemptionDelay(s int64) *projB { p.p.Policy.PreemptionDelaySeconds = s; return p }
