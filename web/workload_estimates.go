package web

import (
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/views"
)

// StartEstimates are the start estimates of waiting workloads, by top owner UID, from the
// scheduler's last estimate pass (docs/scheduling.md "Estimated start").
type StartEstimates interface {
	StartEstimate(uid string) (scheduler.Estimate, bool)
}

// withEstimate adds a waiting workload's estimated start to its view: the time and its basis,
// or null and the sentence saying what is missing.
func (h *workloads) withEstimate(v views.Workload) views.Workload {
	switch v.Phase {
	case "Pending", "Suspended", "Preempted":
	default:
		return v
	}
	if h.estimates == nil {
		v.EstimateBasis = "No estimate: no cluster is connected."
		return v
	}
	e, ok := h.estimates.StartEstimate(v.ID)
	if !ok {
		v.EstimateBasis = "No estimate yet: the scheduler estimates every few seconds, on the replica that schedules."
		return v
	}
	if !e.At.IsZero() {
		at := e.At.UTC()
		v.EstimatedStartAt = &at
	}
	v.EstimateBasis = e.Basis
	return v
}
