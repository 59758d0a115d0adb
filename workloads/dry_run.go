package workloads

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
)

// This file is the dry run of a submission (docs/api.md "Submitting workloads"): ?dryRun=true
// on a submission route, and the Submit page's panel, check and resolve the request as a real
// submission does (Prepare) and then, instead of creating anything, ask the scheduler what its
// next cycle would do with it.
//
// A dry run creates and tells nothing: no object, no workload record and no event. It runs in
// one of the replica's few dry-run slots (DryRunLimits), or is refused (busy). When its answer
// names workloads that would be evicted for it, it writes an audit row saying who asked and
// whom it named (auditVictims); one that names no one writes none, as a read. A refused one is
// written by the HTTP layer as a failure of the action "dry-run", as every refused request
// is, so attempts on projects the caller may not submit to stay on record.

// DryRun foresees a checked submission: the top owner it would create (with a placeholder
// suffix when Arbiter would choose the name), on the scheduler's snapshot.
func (s *Service) DryRun(ctx context.Context, who Caller, sub Submission) (scheduler.Prediction, error) {
	w := sub.Workload.Named("dryrun")
	o := w.Objects()
	var obj runtime.Object
	switch {
	case o.Job != nil:
		obj = o.Job
	case o.Deployment != nil:
		obj = o.Deployment
	case o.PyTorchJob != nil:
		obj = o.PyTorchJob
	default:
		return scheduler.Prediction{}, errors.New("workloads: the submission builds no top owner")
	}
	return s.foresee(ctx, who, sub, obj)
}

// foresee asks the scheduler what it would do with obj, the top owner sub would create, in one
// of the replica's dry-run slots, and audits an answer naming victims.
func (s *Service) foresee(ctx context.Context, who Caller, sub Submission, obj runtime.Object) (scheduler.Prediction, error) {
	if s.foresight == nil {
		return scheduler.Prediction{}, errNoClusterToForesee
	}
	release, err := s.dryRuns.Acquire(SubmitterOf(who.Identity))
	if err != nil {
		return scheduler.Prediction{}, err
	}
	defer release()
	p, err := s.foresight.DryRun(ctx, obj)
	if err != nil {
		if ctx.Err() != nil {
			return scheduler.Prediction{}, ctx.Err()
		}
		return scheduler.Prediction{}, store.Unavailable("the scheduler could not foresee this workload (%s); try again shortly", err.Error())
	}
	if err := s.auditVictims(ctx, who, sub, p); err != nil {
		return scheduler.Prediction{}, err
	}
	return p, nil
}
