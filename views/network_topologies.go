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
