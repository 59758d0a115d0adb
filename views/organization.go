package views

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// NodePoolRef names a node pool (the OpenAPI schema Quota's nodePool).
type NodePoolRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// QuotaGPU is a quota's numbers: limit -1 means no limit.
type QuotaGPU struct {
	Deserved        int `json:"deserved"`
	Limit           int `json:"limit"`
	OverQuotaWeight int `json:"overQuotaWeight"`
}

// Quota is a department's or project's share of one node pool (the OpenAPI schema Quota).
type Quota struct {
	NodePool NodePoolRef `json:"nodePool"`
	GPU      QuotaGPU    `json:"gpu"`
}

// Policy is a project's scheduling policy (the OpenAPI schema Policy; docs/organization.md "Policy (projects)").
type Policy struct {
	DefaultPriorityID         *string `json:"defaultPriorityId"`
	AllowPriorityChange       bool    `json:"allowPriorityChange"`
	AllowPreemptibilityChange bool    `json:"allowPreemptibilityChange"`
	MinPriority               *string `json:"minPriority"`
	MaxPriority               *string `json:"maxPriority"`
	PreemptionOrder           string  `json:"preemptionOrder"`
	PreemptionMode            string  `json:"preemptionMode"`
	MinRuntimeSeconds         int     `json:"minRuntimeSeconds"`
	Queueing                  string  `json:"queueing"`
	// S25: fence or open, and the signed offset of the project's queue priority
	PriorityPolicy string `json:"priorityPolicy"`
	PriorityOffset int    `json:"priorityOffset"`
	// S27
	ReclaimMinRuntimeSeconds int `json:"reclaimMinRuntimeSeconds"`
	PreemptionDelaySeconds   int `json:"preemptionDelaySeconds"`
}

// NodePoolStatus is a pool's live capacity (computed by the scheduler; zero until it runs).
type NodePoolStatus struct {
	Nodes         int `json:"nodes"`
	ReadyNodes    int `json:"readyNodes"`
	GPUs          int `json:"gpus"`
	AllocatedGPUs int `json:"allocatedGpus"`
}

// Usage is what a project or department uses in a node pool (or in all of them).
type Usage struct {
	Allocated               int `json:"allocated"`
	AllocatedNonPreemptible int `json:"allocatedNonPreemptible"`
	Borrowed                int `json:"borrowed"`
	Requested               int `json:"requested"`
	PendingWorkloads        int `json:"pendingWorkloads"`
	RunningWorkloads        int `json:"runningWorkloads"`
}

// PoolUsage is Usage in one node pool.
type PoolUsage struct {
	NodePool NodePoolRef `json:"nodePool"`
	Usage
}

// OrgStatus is a project's or department's live status: totals and one entry per node pool
// it has quota in.
type OrgStatus struct {
	Usage
	NodePools []PoolUsage `json:"nodePools"`
}

// NodePool is a node pool (docs/organization.md "Model").
type NodePool struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	LabelKey   string         `json:"labelKey"`
	LabelValue string         `json:"labelValue"`
	Placement  string         `json:"placement"`
	Default    bool           `json:"default"`
	Status     NodePoolStatus `json:"status"`
	// TimeFairness says, for the page, the pool's time-based fair share (S28) when it is on
	// ("" when off); the API serves it on a route of its own.
	TimeFairness string    `json:"-"`
	CreatedAt    time.Time `json:"createdAt"`
	CreatedBy    string    `json:"createdBy"`
	UpdatedAt    time.Time `json:"updatedAt"`
	UpdatedBy    string    `json:"updatedBy"`
	// NetworkTopologyID and NetworkTopologyName are Run:ai's: the pool's topology (S29), null
	// when it has none.
	NetworkTopologyID   *string `json:"networkTopologyId"`
	NetworkTopologyName *string `json:"networkTopologyName"`
}

// NodePoolAnswer is a node pool as the API answers it: Arbiter's fields, and Run:ai's
// Nodepool fields beside them (the installation's one cluster and tenant, isDefault, a phase
// from its nodes' readiness). Its status.nodes are the names of the pool's nodes, as Run:ai's
// are; their count is status.nodeCount.
type NodePoolAnswer struct {
	NodePool
	Status      NodePoolAnswerStatus `json:"status"`
	ClusterID   string               `json:"clusterId"`
	ClusterName string               `json:"clusterName"`
	TenantID    int                  `json:"tenantId"`
	IsDefault   bool                 `json:"isDefault"`
	Phase       string               `json:"phase"`
}

// NodePoolAnswerStatus is NodePoolStatus with the nodes named.
type NodePoolAnswerStatus struct {
	NodePoolStatus
	Nodes     []string `json:"nodes"`
	NodeCount int      `json:"nodeCount"`
}

// Department groups projects; its quotas bound theirs.
type Department struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Resources    []Quota `json:"resources"`
	ProjectCount int     `json:"projectCount"`
	// S25: fence or open, the signed offset, and a warning when the offset lifts all of the
	// department's work above the top of the dictionary
	PriorityPolicy  string    `json:"priorityPolicy"`
	PriorityOffset  int       `json:"priorityOffset"`
	PriorityWarning string    `json:"priorityWarning,omitempty"`
	Status          OrgStatus `json:"status"`
	CreatedAt       time.Time `json:"createdAt"`
	CreatedBy       string    `json:"createdBy"`
	UpdatedAt       time.Time `json:"updatedAt"`
	UpdatedBy       string    `json:"updatedBy"`
	RunAIOrgUnit
}

// Project is the unit of quota and queueing. NodePools is the order set for it (null: the
// default order); EffectiveNodePools is the order that applies.
type Project struct {
	ID                 string        `json:"id"`
	Name               string        `json:"name"`
	DepartmentID       string        `json:"departmentId"`
	DepartmentName     string        `json:"departmentName"`
	Namespaces         []string      `json:"namespaces"`
	NodePools          []string      `json:"nodePools"`
	EffectiveNodePools []NodePoolRef `json:"effectiveNodePools"`
	Resources          []Quota       `json:"resources"`
	Policy             Policy        `json:"policy"`
	PriorityWarning    string        `json:"priorityWarning,omitempty"` // S25, as on a department
	Status             OrgStatus     `json:"status"`
	CreatedAt          time.Time     `json:"createdAt"`
	CreatedBy          string        `json:"createdBy"`
	UpdatedAt          time.Time     `json:"updatedAt"`
	UpdatedBy          string        `json:"updatedBy"`
	RunAIOrgUnit
	// Run:ai's project fields: its department as parentId, the scheduler that runs its work
	// (always Arbiter's), and its effective default node pools (EffectiveNodePools by name).
	ParentID              string           `json:"parentId"`
	EnforceRunaiScheduler bool             `json:"enforceRunaiScheduler"`
	Effective             ProjectEffective `json:"effective"`
}

// RunAIOrgUnit are the fields Run:ai's schemas require on a department and a project that
// Arbiter answers as constants or sums: the installation's one cluster, an empty description
// (Arbiter keeps none), and the total of the GPUs deserved over its node pools.
type RunAIOrgUnit struct {
	ClusterID      string         `json:"clusterId"`
	Description    string         `json:"description"`
	TotalResources TotalResources `json:"totalResources"`
}

// TotalResources is Run:ai's sum of a unit's quotas; Arbiter has GPU quotas only.
type TotalResources struct {
	GPUQuota float64 `json:"gpuQuota"`
}

// ProjectEffective is Run:ai's effective settings of a project: the node pools its work tries,
// in order, by name.
type ProjectEffective struct {
	DefaultNodePools []string `json:"defaultNodePools"`
}

// QuotaCell is one node pool's quota as a form shows it: raw text, so that what a person typed
// comes back with the message that refused it. An empty Deserved means no quota in the pool;
// an empty Limit means no limit.
type QuotaCell struct {
	Pool     NodePoolRef
	Deserved string
	Limit    string
	Weight   string
	Usage    Usage
}

// FieldError is a refused change and the field it concerns, so the page shows the message
// next to that field: a field as the API names it ("name", "departmentId", "namespaces",
// "resources", "labelKey", "labelValue", "placement"), or a part of a row ("policy", "delete",
// "quota:<node pool id>"). A message whose field the form does not have is shown apart
// (otherError), never dropped.
type FieldError struct {
	Field   string
	Message string
}

// At returns the message when it concerns field.
func (e FieldError) At(field string) string {
	if e.Field == field {
		return e.Message
	}
	return ""
}

// NodePoolsPage is the Node pools page.
type NodePoolsPage struct {
	Page
	Pools   []NodePool
	Search  string
	Columns []SortLink
	CSVHref string
	CanEdit bool
	Form    NodePoolForm
	// TopologyChoices are Arbiter's own topologies a pool may be given; Topologies the
	// page's part on them.
	TopologyChoices []TopologyChoice
	Topologies      TopologiesSection
}

// NodePoolForm is the form that creates a node pool.
type NodePoolForm struct {
	Name, LabelKey, LabelValue, Placement string
	NetworkTopologyID                     string
	Error                                 FieldError
}

// NodePoolRow is one editable row; it is also the htmx fragment after an inline edit.
type NodePoolRow struct {
	Pool            NodePool
	TopologyChoices []TopologyChoice
	CanEdit         bool
	CSRFToken       string
	Saved           string // the field just saved
	Error           FieldError
}

// DepartmentsPage is the Departments page.
type DepartmentsPage struct {
	Page
	Rows    []DepartmentRow
	Pools   []NodePoolRef
	Search  string
	Columns []SortLink
	CSVHref string
	CanEdit bool
	Form    DepartmentForm
}

// DepartmentForm is the form that creates a department.
type DepartmentForm struct {
	Name   string
	Quotas []QuotaCell
	Error  FieldError
}

// DepartmentRow is one department with a quota line per node pool.
type DepartmentRow struct {
	Department Department
	Quotas     []QuotaCell
	CanEdit    bool
	CSRFToken  string
	Saved      string
	Error      FieldError
}

// ProjectsPage is the Projects page.
type ProjectsPage struct {
	Page
	Rows        []ProjectRow
	Pools       []NodePoolRef
	Departments []Department
	Priorities  []Priority
	Search      string
	Department  string // filter: department name
	Columns     []SortLink
	CSVHref     string
	PrevHref    string
	NextHref    string
	Manageable  []Department // the departments the caller may create projects in
	Form        ProjectForm
}

// ProjectForm is the form that creates a project.
type ProjectForm struct {
	Name, DepartmentID, Namespaces string
	Quotas                         []QuotaCell
	Error                          FieldError
}

// ProjectRow is one project with a quota line per node pool and its policy.
type ProjectRow struct {
	Project     Project
	Quotas      []QuotaCell
	Departments []Department
	Priorities  []Priority
	CanEdit     bool // name, department, namespaces, quotas and delete
	// CanEditPolicy: the policy fields that stay inside the project (a research-manager may
	// change them without CanEdit).
	CanEditPolicy bool
	// CanEditSharing: the priority policy and offset, the preemption delay and the reclaim
	// minimum runtime, which change what other projects receive (a department admin's).
	CanEditSharing bool
	CSRFToken      string
	Saved          string
	Error          FieldError
}

func orDash(s string) string { return cmp.Or(s, "—") }

func joinNames(names []string) string { return strings.Join(names, ", ") }

// otherError is a refusal that concerns none of the row's own fields (nor a quota line), shown
// with the row's actions so that it is never lost.
func otherError(e FieldError, fields ...string) string {
	if e.Message == "" || strings.HasPrefix(e.Field, "quota:") || slices.Contains(fields, e.Field) {
		return ""
	}
	return e.Message
}

// policySummary says a policy in a few words, for the closed disclosure.
func policySummary(p Policy, prios []Priority) string {
	parts := []string{}
	if p.DefaultPriorityID != nil {
		for _, x := range prios {
			if x.ID == *p.DefaultPriorityID {
				parts = append(parts, "default "+x.Name)
			}
		}
	}
	if !p.AllowPriorityChange {
		parts = append(parts, "priority fixed")
	} else if p.MinPriority != nil || p.MaxPriority != nil {
		parts = append(parts, cmp.Or(Deref(p.MinPriority), "any")+"–"+cmp.Or(Deref(p.MaxPriority), "any"))
	}
	if !p.AllowPreemptibilityChange {
		parts = append(parts, "preemptibility fixed")
	}
	parts = append(parts, p.PreemptionOrder+" first", p.PreemptionMode, p.Queueing)
	if p.MinRuntimeSeconds > 0 {
		parts = append(parts, "min "+itoa(p.MinRuntimeSeconds)+"s")
	}
	if p.PreemptionDelaySeconds > 0 {
		parts = append(parts, "delay "+itoa(p.PreemptionDelaySeconds)+"s")
	}
	if p.ReclaimMinRuntimeSeconds > 0 {
		parts = append(parts, "reclaim after "+itoa(p.ReclaimMinRuntimeSeconds)+"s")
	}
	if p.PriorityPolicy == "open" || p.PriorityOffset != 0 {
		parts = append(parts, fenceSummary(p.PriorityPolicy, p.PriorityOffset))
	}
	return strings.Join(parts, " · ")
}

// fenceSummary is a unit's S25 setting in a few words.
func fenceSummary(policy string, offset int) string {
	s := "priority: fenced"
	if policy == "open" {
		s = "priority: open"
	}
	switch {
	case offset > 0:
		s += ", +" + itoa(offset)
	case offset < 0:
		s += ", " + itoa(offset)
	}
	return s
}
