package server

import (
	"time"

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

// foresight gives the web layer the scheduler's dry run, or nil (not a typed nil) without a
// cluster.
func foresight(s *kube.Scheduler) web.WorkloadForesight {
	if s == nil {
		return nil
	}
	return s
}

// startEstimates gives the web layer the start estimates of waiting workloads, or nil (not a
// typed nil) without a cluster.
func startEstimates(run *schedulerRun) web.StartEstimates {
	if run == nil {
		return nil
	}
	return run.estimates
}
