package views

import "time"

// Workload is one workload as the scheduler last recorded it (the OpenAPI schema Workload, web/openapi.json). The id is the
// top owner's UID; pendingSeconds is how long it has waited (0 once it runs).
type Workload struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Namespace      string     `json:"namespace"`
	Kind           string     `json:"kind"`
	Type           string     `json:"type"`
	Category       string     `json:"category"`
	ProjectID      *string    `json:"projectId"`
	ProjectName    string     `json:"projectName"`
	DepartmentName string     `json:"departmentName"`
	Priority       string     `json:"priority"`
	PriorityValue  int        `json:"priorityValue"`
	Preemptible    bool       `json:"preemptible"`
	Phase          string     `json:"phase"`
	Reason         string     `json:"reason"`
	Message        string     `json:"message"`
	QueuePosition  *int       `json:"queuePosition"` // nil unless pending
	Gang           int        `json:"gang"`
	RequestedGPUs  int        `json:"requestedGpus"`
	AllocatedGPUs  int        `json:"allocatedGpus"`
	NodePool       string     `json:"nodePool"`
	Nodes          []string   `json:"nodes"`
	CreatedAt      time.Time  `json:"createdAt"`
	StartedAt      *time.Time `json:"startedAt"`
	FinishedAt     *time.Time `json:"finishedAt"`
	PendingSeconds int64      `json:"pendingSeconds"`
	Preemptions    int        `json:"preemptions"`
}

// WorkloadEvent is one entry of a workload's history (S24): Queued, Admitted, Preempted,
// Reclaimed, Suspended, Resumed, PriorityChanged, Completed or Failed.
type WorkloadEvent struct {
	ID      int64     `json:"id"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Actor   string    `json:"actor"`
}
