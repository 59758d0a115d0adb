package cli

import "time"

// The API's answers, as far as the command line reads them (docs/api.md); -o json and -o yaml
// print the answers whole instead.

type workload struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Namespace      string  `json:"namespace"`
	Kind           string  `json:"kind"`
	Type           string  `json:"type"`
	ProjectID      *string `json:"projectId"`
	ProjectName    string  `json:"projectName"`
	PriorityName   string  `json:"priorityName"`
	PriorityValue  int     `json:"priorityValue"`
	Preemptibility string  `json:"preemptibility"`
	// PriorityFrom and PreemptibilityFrom say where each came from (S7, S8).
	PriorityFrom       string     `json:"priorityFrom"`
	PreemptibilityFrom string     `json:"preemptibilityFrom"`
	Phase              string     `json:"k8sPhase"`
	Reason             string     `json:"reason"`
	Message            string     `json:"message"`
	QueuePosition      *int       `json:"queuePosition"`
	Gang               int        `json:"gang"`
	RequestedGPUs      int        `json:"requestedGpus"`
	AllocatedGPUs      int        `json:"allocatedGpus"`
	NodePool           string     `json:"nodePool"`
	Nodes              []string   `json:"nodes"`
	CreatedAt          time.Time  `json:"createdAt"`
	StartedAt          *time.Time `json:"startedAt"`
	FinishedAt         *time.Time `json:"finishedAt"`
	Preemptions        int        `json:"preemptions"`
	Submitter          string     `json:"submitter"`
	EstimatedStartAt   *time.Time `json:"estimatedStartAt"`
	EstimateBasis      string     `json:"estimateBasis"`
	NextStep           string     `json:"nextStep"` // GET /api/v1/workloads/{id} only
}

type workloadList struct {
	Workloads []workload `json:"workloads"`
	Next      *int       `json:"next"`
}

type workloadEvent struct {
	ID           string    `json:"id"`
	At           time.Time `json:"at"`
	Kind         string    `json:"kind"`
	Reason       string    `json:"reason"`
	Message      string    `json:"message"`
	Actor        string    `json:"actor"`
	PreemptorID  string    `json:"preemptorId"`
	BorrowedGPUs *int      `json:"borrowedGpus"`
}

type pod struct {
	Name     string  `json:"name"`
	NodeName *string `json:"nodeName"`
	K8sPhase string  `json:"k8sPhase"`
	GPUs     int     `json:"gpus"`
	NodePool string  `json:"currentNodePool"`
}

type project struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	DepartmentName string   `json:"departmentName"`
	Namespaces     []string `json:"namespaces"`
	Policy         struct {
		DefaultPriorityID         *string `json:"defaultPriorityId"`
		AllowPriorityChange       *bool   `json:"allowPriorityChange"`
		AllowPreemptibilityChange *bool   `json:"allowPreemptibilityChange"`
		MinPriority               *string `json:"minPriority"`
		MaxPriority               *string `json:"maxPriority"`
	} `json:"policy"`
}

type node struct {
	Name          string `json:"name"`
	Status        string `json:"status"`
	NodePool      string `json:"nodePool"`
	Unschedulable bool   `json:"unschedulable"`
	GPUs          struct {
		Allocatable int `json:"allocatable"`
		Allocated   int `json:"allocated"`
		Free        int `json:"free"`
	} `json:"gpus"`
}

type workloadType struct {
	ID                      string  `json:"id"`
	Name                    string  `json:"name"`
	Group                   string  `json:"group"`
	CategoryName            *string `json:"categoryName"`
	EffectivePriorityName   string  `json:"effectivePriorityName"`
	EffectivePreemptibility string  `json:"effectivePreemptibility"`
	GangPolicy              string  `json:"gangPolicy"`
}

type priority struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Value int    `json:"value"`
}

type prediction struct {
	Outcome          string     `json:"outcome"`
	NodePool         *string    `json:"nodePool"`
	Nodes            []string   `json:"nodes"`
	QueuePosition    *int       `json:"queuePosition"`
	Reason           *string    `json:"reason"`
	Message          string     `json:"message"`
	Priority         string     `json:"priority"`
	Preemptibility   string     `json:"preemptibility"`
	Victims          []victim   `json:"victims"`
	EstimatedStartAt *time.Time `json:"estimatedStartAt"`
	EstimateBasis    string     `json:"estimateBasis"`
}

type victim struct {
	WorkloadID string `json:"workloadId"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Project    string `json:"project"`
	Priority   string `json:"priority"`
	Rule       string `json:"rule"`
	GPUs       int    `json:"gpus"`
}
