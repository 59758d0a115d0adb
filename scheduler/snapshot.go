// Package scheduler is Arbiter's decision core. It takes an immutable Snapshot of the cluster
// and of the organisation (node pools, departments, projects, the priority dictionary,
// workload types, workloads and their pods) and returns a Plan: which pods to bind where,
// which workloads to evict or resume, and why every other workload waits.
//
// The package is pure: it does no I/O, reads no clock and keeps no state between calls, so the
// same snapshot always yields the same plan. The rules it implements are named after the
// scheduling contract; docs/rules.md indexes them (S1-S28) with where each lives and its tests.
//
// A cycle (Snapshot.Plan, cycle.go) runs in numbered phases, in the manner of Kueue's scheduler:
//
//  1. load (load.go): index the snapshot by integers, resolve each workload's priority,
//     preemptibility and gang (resolve.go), and rank the running work of every project;
//  2. nominate (queue.go): put pending workloads in their projects' queues and set aside what
//     cannot be tried this cycle (no project, incomplete gang, victims still terminating);
//  3. order (queue.go): sort each project's queue (S10);
//  4. admit (admit.go): take queue heads in hierarchical fair-share order (S11) and try free
//     capacity, reclaim and preemption in turn (S18, evict.go), each attempt inside a statement
//     that is committed or rolled back (statement.go, S19);
//  5. report (report.go): give every workload left waiting its reason and queue position (S23),
//     and summarise usage per project and department.
package scheduler

import "time"

// Resources is an amount of the four things Arbiter checks for fit on a node.
type Resources struct {
	MilliCPU int64 // cpu in thousandths of a core
	Memory   int64 // bytes
	GPUs     int64 // whole nvidia.com/gpu devices
	Pods     int64 // pod slots
}

// Add is the sum of two amounts.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.MilliCPU + o.MilliCPU, r.Memory + o.Memory, r.GPUs + o.GPUs, r.Pods + o.Pods}
}

func (r Resources) sub(o Resources) Resources {
	return Resources{r.MilliCPU - o.MilliCPU, r.Memory - o.Memory, r.GPUs - o.GPUs, r.Pods - o.Pods}
}

// most is, of each resource, the larger amount.
func (r Resources) most(o Resources) Resources {
	return Resources{max(r.MilliCPU, o.MilliCPU), max(r.Memory, o.Memory), max(r.GPUs, o.GPUs), max(r.Pods, o.Pods)}
}

// covers reports whether r is at least o in every dimension.
func (r Resources) covers(o Resources) bool {
	return r.MilliCPU >= o.MilliCPU && r.Memory >= o.Memory && r.GPUs >= o.GPUs && r.Pods >= o.Pods
}

// Preemptibility says whether a running workload may be interrupted (S8).
type Preemptibility string

const (
	Preemptible    Preemptibility = "preemptible"
	NonPreemptible Preemptibility = "non-preemptible"
	// SemiPreemptible (S26): the gang minimum is non-preemptible, replicas beyond it are
	// preemptible, admitted and evicted one by one.
	SemiPreemptible Preemptibility = "semi-preemptible"
)

// Phase is a workload's lifecycle phase (S24).
type Phase string

const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSuspended Phase = "Suspended"
	PhasePreempted Phase = "Preempted"
	PhaseCompleted Phase = "Completed"
	PhaseFailed    Phase = "Failed"
)

// Placement is a node pool's strategy for choosing among nodes that fit (S21).
type Placement string

const (
	Binpack Placement = "binpack" // the fullest node that fits first (the default)
	Spread  Placement = "spread"  // the emptiest node first
)

// PreemptionOrder chooses among victims of equal priority (S16).
type PreemptionOrder string

const (
	OldestFirst PreemptionOrder = "oldest" // the default, as in Backend.AI
	NewestFirst PreemptionOrder = "newest"
)

// PreemptionMode is how a project's workloads are evicted (S20).
type PreemptionMode string

const (
	Terminate PreemptionMode = "terminate" // the default
	Suspend   PreemptionMode = "suspend"
)

// Queueing says whether a project's queue may be passed by workloads behind a blocked head (S12).
type Queueing string

const (
	BestEffort Queueing = "best-effort" // the default
	Strict     Queueing = "strict"
)

// PriorityPolicy says whether a department's or project's priorities count outside it (S25).
type PriorityPolicy string

const (
	Fence PriorityPolicy = "fence" // the default: priority counts only inside the unit
	Open  PriorityPolicy = "open"  // the unit's highest pending priority counts among its siblings
)

// NoLimit is the Quota.Limit that means "no limit".
const NoLimit int64 = -1

// DefaultOverQuotaWeight is the over-quota weight of a quota nobody has set.
const DefaultOverQuotaWeight int64 = 2

// Quota is a project's or department's share of one node pool's GPUs.
type Quota struct {
	Deserved        int64 // guaranteed GPUs, ≥ 0
	Limit           int64 // NoLimit, or ≥ Deserved
	OverQuotaWeight int64 // share of the surplus, ≥ 0
}

// DefaultQuota is what applies in a node pool for which a project or department has no quota:
// nothing guaranteed, no limit, the default weight (so its preemptible work may borrow).
func DefaultQuota() Quota {
	return Quota{Deserved: 0, Limit: NoLimit, OverQuotaWeight: DefaultOverQuotaWeight}
}

// Policy is a project's scheduling policy. Its zero value is the default policy.
type Policy struct {
	// DefaultPriority names a dictionary entry, or is empty (null).
	DefaultPriority string
	// ForbidPriorityChange is the API's allowPriorityChange negated, so that the zero Policy
	// allows changes as the default policy does.
	ForbidPriorityChange bool
	// ForbidPreemptibilityChange is allowPreemptibilityChange negated: the workload's and pod's
	// preemptibility labels are ignored (S8 steps 1-2).
	ForbidPreemptibilityChange bool
	// MinPriority and MaxPriority name dictionary entries bounding resolved priorities, or are empty.
	MinPriority, MaxPriority string
	PreemptionOrder          PreemptionOrder // empty means OldestFirst
	PreemptionMode           PreemptionMode  // empty means Terminate
	MinRuntimeSeconds        int64
	Queueing                 Queueing // empty means BestEffort
	// ReclaimMinRuntimeSeconds spares the project's borrowed work from reclaim until it has
	// run that long (S27), as MinRuntimeSeconds does from preemption.
	ReclaimMinRuntimeSeconds int64
	// PreemptionDelaySeconds is how long the project's pending work waits before it may
	// cause preemption or reclaim (S27).
	PreemptionDelaySeconds int64
}

// NodePool is a set of nodes selected by one label; the pool with an empty LabelKey takes every
// node no other pool selects.
type NodePool struct {
	Name       string
	LabelKey   string
	LabelValue string
	Placement  Placement // empty means Binpack
	// Topology names the topology (Snapshot.Topologies) of the pool's nodes, as Run:ai's node
	// pools reference a network topology; empty means none (S29).
	Topology string
	// TimeBasedFairness weighs past use in the pool's over-quota order (S28); its zero value is off.
	TimeBasedFairness TimeBasedFairness
}

// Taint is a node taint. Effects NoSchedule and NoExecute keep pods without a matching toleration away.
type Taint struct {
	Key, Value, Effect string
}

// Toleration is a pod toleration. Operator is "Exists" or "Equal" (the default); an empty
// Effect tolerates every effect; an empty Key with Exists tolerates every taint.
type Toleration struct {
	Key, Operator, Value, Effect string
}

// NodeSelectorRequirement is one expression of a required node affinity term. Operator is one
// of In, NotIn, Exists, DoesNotExist, Gt, Lt, as in Kubernetes.
type NodeSelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// NodeSelectorTerm holds requirements that must all match; a pod's terms are alternatives.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement
}

// Node is a Kubernetes node as the scheduler sees it.
type Node struct {
	Name          string
	Labels        map[string]string
	Taints        []Taint
	Ready         bool
	Unschedulable bool
	Capacity      Resources
	Allocatable   Resources
	// Occupied is what pods that are not Arbiter's request on this node (S3): counted as used.
	Occupied Resources
}

// Department groups projects; its quota bounds what its projects together get (S11).
type Department struct {
	Name   string
	Quotas map[string]Quota // by node pool name; a missing pool has DefaultQuota
	// PriorityPolicy (empty means Fence) and PriorityOffset give its queue priority (S25).
	PriorityPolicy PriorityPolicy
	PriorityOffset int32
}

// Project is the unit of quota and queueing.
type Project struct {
	Name       string
	ID         string           // the organization's id; records carry it (a workload belongs to its project by id), scheduling does not read it
	Department string           // empty or unknown: the project is bounded by no department
	Quotas     map[string]Quota // by node pool name; a missing pool has DefaultQuota
	Policy     Policy
	// NodePools lists the pools the project's workloads try, in order (S21); empty means
	// every pool, by name.
	NodePools []string
	// PriorityPolicy (empty means Fence) and PriorityOffset give its queue priority (S25).
	PriorityPolicy PriorityPolicy
	PriorityOffset int32
}

// Priority is an entry of the priority dictionary.
type Priority struct {
	Name  string
	Value int32
}

// Category groups workload types and gives their defaults.
type Category struct {
	Name                  string
	DefaultPriority       string
	DefaultPreemptibility Preemptibility
}

// WorkloadType maps a kind (or native type) to a category and optional overrides (S2).
type WorkloadType struct {
	Name           string
	Group          string
	Category       string         // empty: no category (the cluster default applies)
	Priority       string         // empty: the category's default
	Preemptibility Preemptibility // empty: the category's default
}

// GangSpec carries the fields of a top owner from which its gang size is computed (S5).
type GangSpec struct {
	// Job: spec.parallelism, spec.completions and status.succeeded.
	Parallelism, Completions *int32
	Succeeded                int32
	// Kubeflow jobs: every replicaSpecs[*].replicas; Ray: 1 for the head then each worker
	// group's minReplicas; JobSet (and a TrainJob's): each replicated job of the first stage,
	// replicas × pods per Job; native distributed types: the replica count.
	Replicas []int32
	// LeaderWorkerSet: the group size (the leader counted). Each group is a gang of its own:
	// pods carry their group in Pod.GangGroup.
	GroupSize int32
	// Existing is set for a top owner of a kind Arbiter does not know: the pods that exist.
	Existing int32
}

// Pod is one of a workload's pods, bound or not. For a suspended workload the pods are those
// its spec will create (no UID, no node).
type Pod struct {
	UID, Namespace, Name string
	Labels               map[string]string
	PriorityClassName    string // spec.priorityClassName
	Requests             Resources
	NodeSelector         map[string]string
	RequiredAffinity     []NodeSelectorTerm // required node affinity; empty means none
	Tolerations          []Toleration
	NodeName             string // the node it is bound to; empty while pending
	Terminating          bool   // deleted but still holding its node's resources
	// GangGroup is the group a pod belongs to when each group of its workload is a gang of its
	// own (GangSpec.GroupSize: a LeaderWorkerSet's group index); read only then.
	GangGroup string
	// PodSet is the template the pod was made from (a JobSet's replicated job, a Kubeflow
	// job's role), matched against Workload.PodSetTopologies (S29); empty when none.
	PodSet string
	// Foreseen marks a pod its controller has yet to make, read from its owner's template
	// (foreseen_pods.go): placed in a cycle, never bound. It has no UID.
	Foreseen bool
}

// PodRef names a pod.
type PodRef struct {
	UID, Namespace, Name string
}

// Workload is a top owner and its pods (S4).
type Workload struct {
	UID       string // the top owner's UID
	Namespace string
	Name      string
	Kind      string
	Group     string
	Type      string // workload type name (S4); unknown types get the cluster default
	Project   string // resolved by S6; empty means no project
	// Labels and Annotations of the top owner.
	Labels      map[string]string
	Annotations map[string]string
	Gang        GangSpec
	Phase       Phase
	QueuedAt    time.Time // the top owner's creation time, kept across preemption (S10)
	StartedAt   time.Time // when it last started running
	// WaitingSince is when it last began to wait: its queue time, or when it was last
	// evicted; zero when unknown. Work that started after it is not its victim (S19).
	WaitingSince time.Time
	// Deadline is when the top owner's activeDeadlineSeconds runs out (a Job's start plus
	// it); zero without one. Cycles ignore it; the start estimate (estimate.go) ends running
	// work there.
	Deadline time.Time
	Pods     []Pod
	// PreemptedBy is the UID of the workload for which this one is being evicted, while its
	// pods terminate (S19).
	PreemptedBy string
	// Nominated is set when an earlier cycle evicted on this workload's behalf and the
	// victims are gone: it is tried first so that the freed capacity is its own (S19).
	Nominated bool
	// PodsDue is set when some of its pods are foreseen (Pod.Foreseen): until then they are
	// placed as if made; from then on they are not counted (foreseen_pods.go).
	PodsDue time.Time
	// Lookups, when set by PrepareLookups, holds the labels resolution reads (S7, S8), looked
	// up once by whoever builds the workload rather than in every cycle. Whoever changes
	// Labels or the first pod's labels afterwards must prepare them again, or clear this.
	Lookups *LabelLookups
	// Topology, when set, asks that all the gang's pods go into one domain (S29).
	// PodSetTopologies ask it of each pod set instead; Topology wins when both are set.
	Topology         *TopologyRequest
	PodSetTopologies []PodSetTopology
	// TopologyProblems are annotation values that could not be read as a topology request,
	// each a sentence; each becomes an InvalidTopology warning and asks for nothing.
	TopologyProblems []string
}

// Snapshot is everything one scheduling cycle decides from. The scheduler never modifies it.
type Snapshot struct {
	Now           time.Time
	Priorities    []Priority
	Categories    []Category
	WorkloadTypes []WorkloadType
	NodePools     []NodePool
	Nodes         []Node
	Departments   []Department
	Projects      []Project
	Workloads     []Workload
	// Reservations are those of earlier plans still in force (reserve.go, S19).
	Reservations []Reservation
	// Topologies are the cluster's topologies, by name (S29).
	Topologies []Topology
	// HistoricalUsage is, by node pool name and then project name, each project's decayed use
	// of the pool over the pool's window, as a fraction of what the pool could have given
	// (UsageDecay.Value): read only in pools with TimeBasedFairness on (S28). A department's is
	// the sum of its projects'. Missing entries are 0.
	HistoricalUsage map[string]map[string]float64
}
