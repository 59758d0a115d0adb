package scheduler

// Topology is how a cluster's nodes are grouped by the network between them (S29): an ordered
// list of node label keys, widest first (for example block, rack, kubernetes.io/hostname), as
// Kueue's and KAI's Topology objects and Run:ai's network topologies describe it. A domain of a
// level is the set of nodes that share that label's value (and the values of every wider level).
type Topology struct {
	Name   string
	Levels []string // node label keys, widest first
}

// TopologyRequest is a workload's (or a pod set's) ask to be placed inside one domain of a
// level (S29), read from Kueue's or KAI's annotations.
type TopologyRequest struct {
	// Topology names one of Snapshot.Topologies (KAI's kai.scheduler/topology); empty means the
	// node pool's topology, else the first topology by name that lists Level.
	Topology string
	// Level is a node label key. A key no topology lists still works: its domains are the sets
	// of nodes sharing its value.
	Level string
	// Required: the pods go into one domain of Level or wait (TopologyUnsatisfiable).
	// Otherwise preferred: the narrowest level that fits, widening level by level, then any
	// nodes of the pool.
	Required bool
	// Preferred, beside Required, is a narrower level of the same topology tried first inside
	// the required one, widening up to it (KAI's preferred placement beside its required one);
	// empty when none.
	Preferred string
	// Source says where it was read, for sentences ("the workload's annotation
	// kueue.x-k8s.io/podset-required-topology").
	Source string
}

// PodSetTopology is the request of one pod set (a JobSet's replicated job, a Kubeflow job's
// role): the pods whose Pod.PodSet is PodSet go into one domain of their own.
type PodSetTopology struct {
	PodSet  string
	Request TopologyRequest
}

// TopologyUnsatisfiable: the pool has the GPUs, but not inside one domain of the level asked for.
const TopologyUnsatisfiable Reason = "TopologyUnsatisfiable"

// InvalidTopology: a topology request could not be read as written; it is ignored or read
// as far as it goes, as its message says.
const InvalidTopology WarningCode = "InvalidTopology"

// TopologyPlacement is where a workload (or one of its pod sets) that asks for a topology is
// placed once the plan is carried out: bound, resumed, or set aside behind evictions.
type TopologyPlacement struct {
	Workload string // UID
	PodSet   string // empty for the whole workload
	Topology string // the topology whose levels were read; empty when none lists the level
	Required bool
	// Level is the narrowest level, of those the request allows, whose one domain holds all
	// its placed pods; Domain names that domain by its levels' values, widest first, joined
	// by "/" ("block-1/rack-3"). Both are empty when a preferred request's pods spread wider
	// than its widest level.
	Level, Domain string
}
