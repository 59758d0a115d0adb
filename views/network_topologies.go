package views

import "time"

// NetworkTopology is Run:ai's NetworkTopology: one of Arbiter's own topologies (S29), the
// installation's one cluster and tenant, and the names of the node pools that refer to it.
// Arbiter's own topologies are in force once stored (phase Ready); their source is "Arbiter",
// where Run:ai's say "Run.ai".
type NetworkTopology struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	ClusterID string    `json:"clusterId"`
	Levels    []string  `json:"levels"`
	TenantID  int       `json:"tenantId"`
	CreatedAt time.Time `json:"createdAt"`
	CreatedBy string    `json:"createdBy"`
	Phase     string    `json:"phase"`
	Source    string    `json:"source"`
	NodePools []string  `json:"nodePools"`
	// Status is required by Run:ai's schema, which does not describe it: Arbiter answers the
	// phase in it.
	Status NetworkTopologyStatus `json:"status"`
}

// NetworkTopologyStatus is a topology's status: its phase.
type NetworkTopologyStatus struct {
	Phase string `json:"phase"`
}

// TopologyChoice is one of Arbiter's own topologies as a node pool's select offers it.
type TopologyChoice struct {
	ID, Name string
}

// TopologiesSection is the Node pools page's part on topologies (S29): Arbiter's own, which
// admins create and delete here, and the cluster's (Kueue's and KAI's Topology objects, as the
// scheduler's last cycle read them), which only say what the cluster has.
type TopologiesSection struct {
	Own     []NetworkTopology
	Cluster []ClusterTopology
	// Connected: a cluster is connected and the scheduler has cycled, so Cluster is known.
	Connected bool
	CanEdit   bool
	CSRFToken string
	Form      TopologyForm
}

// ClusterTopology is a topology the cluster describes that none of Arbiter's own hides.
type ClusterTopology struct {
	Name   string
	Levels []string
}

// TopologyForm is the form that creates a topology; Levels are one label key a line.
type TopologyForm struct {
	Name, Levels string
	Error        FieldError
}

// deref is the string p points to, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TopologyLanding is where a workload that asks for a topology landed (S29), from the
// scheduler's last cycle: the domain of the narrowest level that holds all its pods (or its pod
// set's).
type TopologyLanding struct {
	PodSet   string // empty for the whole workload
	Required bool
	Topology string // empty when no topology defines the level
	Level    string // the label key; empty when it spread wider than the levels it prefers
	Domain   string // the levels' values, widest first, "/"-joined
	Sentence string
}
