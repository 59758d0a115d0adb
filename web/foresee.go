package web

import (
	"time"

	"github.com/arbiterhq/arbiter/scheduler"
)

// PredictionJSON is a dry run's answer in the API: {outcome, nodePool, nodes, queuePosition,
// reason, message, victims, estimatedStartAt, estimateBasis, topology}.
type PredictionJSON struct {
	Outcome        string       `json:"outcome"`
	NodePool       *string      `json:"nodePool"`
	Nodes          []string     `json:"nodes"`
	QueuePosition  *int         `json:"queuePosition"`
	Reason         *string      `json:"reason"`
	Message        string       `json:"message"`
	Priority       string       `json:"priority"`
	Preemptibility string       `json:"preemptibility"`
	Victims        []VictimJSON `json:"victims"`
	// EstimatedStartAt is now for a workload that starts now or after evictions (they take
	// seconds), else the start estimate's, null when it cannot be told; EstimateBasis says
	// what the figure rests on, or what is missing.
	EstimatedStartAt *time.Time `json:"estimatedStartAt"`
	EstimateBasis    string     `json:"estimateBasis"`
	// Topology is where a workload asking for a topology would land (S29), one entry for the
	// whole workload or one per pod set that asks; empty when it asks for none or waits.
	Topology []TopologyJSON `json:"topology"`
}

// TopologyJSON is the domain a dry run's workload, or one of its pod sets, would land in.
type TopologyJSON struct {
	PodSet   string `json:"podSet"`   // empty for the whole workload
	Topology string `json:"topology"` // the topology its level was read on; empty when none lists it
	// Level is the node label its pods would share and Domain that label's value with the
	// wider levels' ("block-0/rack-1"); both are empty when a preferred request would spread
	// wider than its widest level.
	Level    string `json:"level"`
	Domain   string `json:"domain"`
	Required bool   `json:"required"`
}

// VictimJSON is a workload a dry run would evict, and under which rule.
type VictimJSON struct {
	WorkloadID string `json:"workloadId"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Project    string `json:"project"`
	Priority   string `json:"priority"`
	Rule       string `json:"rule"`
	GPUs       int64  `json:"gpus"`
}

// NewPredictionJSON shapes a prediction for the API.
func NewPredictionJSON(p scheduler.Prediction) PredictionJSON {
	out := PredictionJSON{Outcome: string(p.Outcome), Nodes: p.Nodes, Message: p.Message,
		Priority: p.Priority.Name, Preemptibility: string(p.Preemptibility), Victims: []VictimJSON{}, Topology: []TopologyJSON{}}
	if out.Nodes == nil {
		out.Nodes = []string{}
	}
	if p.NodePool != "" {
		out.NodePool = &p.NodePool
	}
	if p.QueuePosition > 0 {
		out.QueuePosition = &p.QueuePosition
	}
	if p.Reason != "" {
		r := string(p.Reason)
		out.Reason = &r
	}
	for _, v := range p.Victims {
		out.Victims = append(out.Victims, VictimJSON{WorkloadID: v.WorkloadID, Name: v.Name, Namespace: v.Namespace,
			Project: v.Project, Priority: v.Priority.Name, Rule: string(v.Rule), GPUs: v.GPUs})
	}
	for _, tp := range p.Topology {
		out.Topology = append(out.Topology, TopologyJSON{PodSet: tp.PodSet, Topology: tp.Topology, Level: tp.Level, Domain: tp.Domain, Required: tp.Required})
	}
	out.EstimateBasis = p.Start.Basis
	if !p.Start.At.IsZero() {
		at := p.Start.At.UTC()
		out.EstimatedStartAt = &at
	}
	return out
}
