package scheduler

import (
	"strings"
	"time"
)

// Reason is why a workload is still pending (S23).
type Reason string

const (
	GangIncomplete          Reason = "GangIncomplete"
	NoProject               Reason = "NoProject"
	OverLimit               Reason = "OverLimit"
	NonPreemptibleOverQuota Reason = "NonPreemptibleOverQuota"
	InsufficientCapacity    Reason = "InsufficientCapacity"
	NoMatchingNodes         Reason = "NoMatchingNodes"
	WaitingForEvictions     Reason = "WaitingForEvictions"
	BehindStrictHead        Reason = "BehindStrictHead"
)

// Rule names the rule under which a workload is evicted.
type Rule string

const (
	RulePreemption Rule = "S16" // inside a project, for higher priority work
	RuleReclaim    Rule = "S17" // between projects, for in-quota work
)

// Bind places one pending pod on a node.
type Bind struct {
	Workload string // UID of the top owner
	Pod      PodRef
	Node     string
}

// Eviction removes a running workload to make room for Preemptor (S16, S17, S20).
type Eviction struct {
	Workload  string // UID
	Namespace string
	Name      string
	Project   string
	Mode      PreemptionMode
	Preemptor string // UID of the workload the room is for
	Rule      Rule
	GPUs      int64 // GPUs freed
	// Pods, when set, are the only pods to evict: replicas of a semi-preemptible workload
	// beyond its minimum, which keeps running (S26). Empty means the whole workload.
	Pods []PodRef
}

// Sentence is what one eviction says, wherever it is told (the victim's Kubernetes event and
// pod condition, its workload history): who the room is for (preemptor, "namespace/name"),
// under which rule, the GPUs freed, and the exit code or, when suspended, that it keeps its
// place (S20).
func (e *Eviction) Sentence(preemptor string) string {
	s := "Preempted by " + preemptor + " under " + string(e.Rule) + " (" + ruleText(e.Rule) + "); " + gpus(e.GPUs) + " freed"
	if len(e.Pods) > 0 {
		names := make([]string, len(e.Pods))
		for i, p := range e.Pods {
			names[i] = p.Name
		}
		return "Replicas beyond its minimum (" + strings.Join(names, ", ") + ") preempted by " + preemptor + " under " +
			string(e.Rule) + " (" + ruleText(e.Rule) + "); " + gpus(e.GPUs) + " freed; its minimum keeps running"
	}
	if e.Mode == Suspend {
		return s + "; suspended, it keeps its place in the queue"
	}
	return s + "; exit code 3006"
}

func ruleText(r Rule) string {
	switch r {
	case RulePreemption:
		return "a higher-priority workload of the same project"
	case RuleReclaim:
		return "another project reclaiming its deserved quota"
	}
	return string(r)
}

// Resume lets a suspended workload run again: its controller recreates the pods, which are
// bound in a later cycle. The GPUs are set aside for it in this cycle.
type Resume struct {
	Workload  string // UID
	Namespace string
	Name      string
	Project   string
	NodePool  string
	GPUs      int64
}

// Reservation is capacity set aside for a workload that cannot take it at once: a preemptor
// whose victims still hold their nodes, or a resumed workload whose controller has yet to make
// its pods (S19). A plan lists those it makes; the caller gives them back in each later
// snapshot until the workload's pods are bound (or the workload is gone), and no other
// workload is placed on them meanwhile.
type Reservation struct {
	Workload       string // UID
	Project        string
	NonPreemptible bool
	Pods           []ReservedPod
}

// ReservedPod is where one of a reservation's pods goes, and what it asks for there.
type ReservedPod struct {
	Node     string
	Requests Resources
}

// PendingWorkload is a workload that waits, and why (S23).
type PendingWorkload struct {
	Workload       string // UID
	Namespace      string
	Name           string
	Project        string // empty for NoProject
	Priority       Priority
	PriorityAlias  string // the KAI or Run:ai class name Priority was read as, if any (S7)
	Preemptibility Preemptibility
	// PriorityFrom and PreemptibilityFrom are where each came from (S7, S8).
	PriorityFrom, PreemptibilityFrom From
	Reason                           Reason
	Message                          string // a sentence saying what to do
	QueuePosition                    int    // 1 for the next in its project's queue; 0 without a project
	RequestedGPUs                    int64  // GPUs of its pods still to be placed
	// NominatedNodes are where its pods will go once the evictions made for it are done,
	// and NominatedGPUs how many GPUs are set aside for it there in this plan.
	NominatedNodes []string
	NominatedGPUs  int64
	// AwaitingPods says it was placed but not bound because its controller has yet to make
	// some of its pods (foreseen_pods.go): the seconds that takes, not worth an event.
	AwaitingPods bool
	// EvictionsFrom is when what held back evictions for it passes, and EvictionsHeldBy what
	// that is (its project's preemption delay, or the minimum runtime of the work it could
	// evict: S16, S27); zero and empty when nothing did.
	EvictionsFrom   time.Time
	EvictionsHeldBy string
}

// RunningWorkload is a workload holding GPUs after the plan is carried out.
type RunningWorkload struct {
	Workload       string // UID
	Namespace      string
	Name           string
	Project        string
	Priority       Priority
	PriorityAlias  string // the KAI or Run:ai class name Priority was read as, if any (S7)
	Preemptibility Preemptibility
	// PriorityFrom and PreemptibilityFrom are where each came from (S7, S8).
	PriorityFrom, PreemptibilityFrom From
	NodePool                         string
	GPUs                             int64 // GPUs of its bound pods
	Borrowed                         bool  // beyond its project's deserved quota, so reclaimable (S17)
}

// QueueStatus is a project's or department's use of one node pool after the plan.
type QueueStatus struct {
	Name                    string
	NodePool                string
	Deserved                int64
	Limit                   int64
	Allocated               int64
	AllocatedNonPreemptible int64
	Borrowed                int64 // allocated beyond deserved
	Requested               int64 // GPUs its pending workloads ask for (counted in its first pool)
	PendingWorkloads        int
	RunningWorkloads        int
	// FairShare is the GPUs of the pool S11 gives it when the pool is divided among what every
	// unit holds and asks for now: deserved quota plus its weighted share of what is spare, at
	// most its demand and its limit (FairShares).
	FairShare float64
}

// NodePoolStatus is a node pool's nodes and GPUs after the plan. A node belongs to the first
// pool by name whose label it carries, else to the first pool without a label (the default
// pool), as the cycle places it. AllocatedGPUs are what pods hold on the pool's nodes once the
// plan is carried out: Arbiter's bound pods (terminating ones still hold theirs), the pods the
// plan binds, and other schedulers' pods (Node.Occupied).
type NodePoolStatus struct {
	Name          string
	Nodes         int
	ReadyNodes    int
	GPUs          int64 // allocatable
	ReadyGPUs     int64 // allocatable on ready nodes
	AllocatedGPUs int64
}

// Plan is the outcome of one scheduling cycle.
type Plan struct {
	Binds     []Bind
	Evictions []Eviction
	Resumes   []Resume
	// Reservations made in this plan (by workload UID); see Reservation.
	Reservations []Reservation
	Pending      []PendingWorkload // by project, then queue position
	Running      []RunningWorkload // by project, node pool, then rank (S15, docs/rules.md)
	Warnings     []Warning         // by workload UID
	Projects     []QueueStatus     // by project, then node pool
	Departments  []QueueStatus     // by department, then node pool
	NodePools    []NodePoolStatus  // every node pool, by name
	// Topology says where each workload that asks for a topology is placed once the plan is
	// carried out (S29), by workload UID then pod set; empty without a report.
	Topology []TopologyPlacement
}
