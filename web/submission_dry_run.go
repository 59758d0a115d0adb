package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file is the dry run of a submission (docs/api.md "Submitting workloads"): ?dryRun=true
// on a submission route, and the Submit page's panel, check and resolve the request as a real
// submission does (h.prepare) and then, instead of creating anything, ask the scheduler what
// its next cycle would do with it.
//
// A dry run creates and tells nothing: no object, no workload record and no event. It runs in
// one of the replica's few dry-run slots (DryRunLimits), or is refused with 429. When its
// answer names workloads that would be evicted for it, it writes an audit row saying who
// asked and whom it named (auditVictims); one that names no one writes none, as a GET. A
// refused one (400, 403, 429) is written by the audit middleware as a failure of the action
// "dry-run", as every refused request is, so attempts on projects the caller may not submit
// to stay on record.

// errNoClusterToForesee answers a dry run on a server without a cluster.
var errNoClusterToForesee = &httpError{status: http.StatusServiceUnavailable,
	message: "no cluster is connected, so there is no scheduler to ask what it would do; start Arbiter with a kubeconfig"}

// foresee is the dry run of a checked submission: the top owner it would create (with a
// placeholder suffix when Arbiter would choose the name), foreseen on the scheduler's snapshot.
func (h *submissions) foresee(c echo.Context, s submission) (PredictionJSON, error) {
	if h.foresight == nil {
		return PredictionJSON{}, errNoClusterToForesee
	}
	release, err := h.dryRuns.Acquire(submitterOf(identity(c)))
	if err != nil {
		return PredictionJSON{}, err
	}
	defer release()
	w := s.workload.Named("dryrun")
	o := w.Objects()
	var obj runtime.Object
	switch {
	case o.Job != nil:
		obj = o.Job
	case o.Deployment != nil:
		obj = o.Deployment
	default:
		return PredictionJSON{}, errors.New("web: the submission builds no top owner")
	}
	ctx := c.Request().Context()
	p, err := h.foresight.DryRun(ctx, obj)
	if err != nil {
		if ctx.Err() != nil {
			return PredictionJSON{}, ctx.Err()
		}
		return PredictionJSON{}, &httpError{status: http.StatusServiceUnavailable,
			message: "the scheduler could not foresee this workload (" + err.Error() + "); try again shortly"}
	}
	out := NewPredictionJSON(p)
	if err := h.auditVictims(c, s, out); err != nil {
		return PredictionJSON{}, err
	}
	return out, nil
}
