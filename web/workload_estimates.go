package web

import (
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
)

// estimating says a scheduler makes start estimates (a cluster is connected); the workload
// features that show a workload embed it for withEstimate.
type estimating bool

// withEstimate adds a waiting workload's estimated start to its view, from its record: the
// time and its basis, or null and the sentence saying what is missing. The leader's passes
// write the estimates into the records (docs/scheduling.md "Estimated start"), so every
// replica answers the same.
func (e estimating) withEstimate(v views.Workload, r store.WorkloadRecord) views.Workload {
	switch v.Phase {
	case "Pending", "Suspended", "Preempted":
	default:
		return v
	}
	switch {
	case r.FinishedAt != nil: // preempted with nothing to bring it back: it waits for nothing
		return v
	case r.EstimateBasis != "":
		if r.EstimatedStartAt != nil {
			at := r.EstimatedStartAt.UTC()
			v.EstimatedStartAt = &at
		}
		v.EstimateBasis = r.EstimateBasis
	case !bool(e):
		v.EstimateBasis = "No estimate: no cluster is connected."
	default:
		v.EstimateBasis = views.NoEstimateYetBasis
	}
	return v
}
