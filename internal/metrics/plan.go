package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiterhq/arbiter/scheduler"
)

// planCollector exposes the last cycle's plan as gauges. It builds them from one stored
// summary at scrape time rather than resetting and refilling GaugeVecs each cycle: a scrape
// never sees a half-filled set, and a project or pool gone from the plan is gone from the
// metrics at once.
type planCollector struct {
	last    atomic.Pointer[planSummary]
	pending *prometheus.Desc
	gpus    *prometheus.Desc
}

// planSummary is what the gauges show of one plan.
type planSummary struct {
	pending map[pendingKey]int
	pools   []poolGPUs
}

type pendingKey struct{ project, reason string }

type poolGPUs struct {
	name                      string
	allocated, free, borrowed int64
}

func newPlanCollector() *planCollector {
	return &planCollector{
		pending: prometheus.NewDesc("arbiter_pending_workloads",
			"Workloads waiting after the last cycle, by project (empty: in no project) and reason code (S23: InsufficientCapacity, OverLimit, ...).",
			[]string{"project", "reason"}, nil),
		gpus: prometheus.NewDesc("arbiter_gpus",
			"GPUs of each node pool after the last cycle, by state: allocated (held or being bound), free (allocatable minus allocated), borrowed (allocated to projects beyond their deserved quota, so reclaimable).",
			[]string{"pool", "state"}, nil),
	}
}

// set summarizes a plan. The labels are bounded: projects and pools come from the
// organization, reasons are the fixed codes, never the messages.
func (p *planCollector) set(plan *scheduler.Plan) {
	s := &planSummary{pending: map[pendingKey]int{}}
	for _, w := range plan.Pending {
		s.pending[pendingKey{w.Project, string(w.Reason)}]++
	}
	borrowed := map[string]int64{}
	for _, q := range plan.Projects {
		borrowed[q.NodePool] += q.Borrowed
	}
	for _, np := range plan.NodePools {
		s.pools = append(s.pools, poolGPUs{name: np.Name, allocated: np.AllocatedGPUs, free: max(0, np.GPUs-np.AllocatedGPUs), borrowed: borrowed[np.Name]})
	}
	p.last.Store(s)
}

func (p *planCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.pending
	ch <- p.gpus
}

func (p *planCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.last.Load()
	if s == nil {
		return
	}
	for k, n := range s.pending {
		ch <- prometheus.MustNewConstMetric(p.pending, prometheus.GaugeValue, float64(n), k.project, k.reason)
	}
	for _, np := range s.pools {
		ch <- prometheus.MustNewConstMetric(p.gpus, prometheus.GaugeValue, float64(np.allocated), np.name, "allocated")
		ch <- prometheus.MustNewConstMetric(p.gpus, prometheus.GaugeValue, float64(np.free), np.name, "free")
		ch <- prometheus.MustNewConstMetric(p.gpus, prometheus.GaugeValue, float64(np.borrowed), np.name, "borrowed")
	}
}
