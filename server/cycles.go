package server

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/scheduler/kube"
	"github.com/arbiterhq/arbiter/web"
)

// lastCycle gives the web layer the scheduler's last cycle (the Nodes page), or nil (not a
// typed nil) without a cluster.
func lastCycle(s *kube.Scheduler) web.LastCycle {
	if s == nil {
		return nil
	}
	return schedulerCycles{s}
}

type schedulerCycles struct{ s *kube.Scheduler }

// LastCycle is the last cycle's snapshot and plan, both nil before the first cycle.
func (c schedulerCycles) LastCycle() (*scheduler.Snapshot, *scheduler.Plan) {
	r := c.s.Last()
	if r == nil || r.View == nil {
		return nil, nil
	}
	return &r.View.Snapshot, r.Plan
}

// clusterStatus gives the web layer the API server's reachability and the leader, or nil
// (not a typed nil) without a cluster.
func clusterStatus(run *schedulerRun) web.ClusterStatus {
	if run == nil {
		return nil
	}
	return runStatus{run}
}

type runStatus struct{ run *schedulerRun }

func (s runStatus) UnreachableSince() time.Time   { return s.run.health.UnreachableSince() }
func (s runStatus) Leader() (leader, self string) { return s.run.lead.Leader() }

// foresight gives the web layer the scheduler's dry run, with the estimator's median runtimes
// for the start of a workload that would wait, or nil (not a typed nil) without a cluster.
func foresight(run *schedulerRun) web.WorkloadForesight {
	if run == nil {
		return nil
	}
	return dryRunner{run}
}

type dryRunner struct{ run *schedulerRun }

func (d dryRunner) DryRun(ctx context.Context, obj runtime.Object) (scheduler.Prediction, error) {
	return d.run.sched.Workloads().DryRun(ctx, obj, scheduler.EstimateInput{Medians: d.run.estimates.lastMedians()})
}
