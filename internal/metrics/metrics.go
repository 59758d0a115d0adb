// Package metrics is Arbiter's Prometheus instrumentation: every arbiter_* metric is defined
// here, on a registry of Arbiter's own (not client_golang's global default, so tests and a
// second server in one process never collide), with the Go and process collectors beside
// them. The scheduler, the web layer and the store report through the small methods below;
// docs/operations.md ("Metrics") lists each metric, its labels and the alerts built on them.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/arbiterhq/arbiter/scheduler"
)

// Registry holds Arbiter's metrics. Its methods are safe on a nil *Registry (they do nothing),
// so code built without metrics (tests, tools) needs no stand-in.
type Registry struct {
	reg *prometheus.Registry

	cycleSeconds    *prometheus.HistogramVec // phase: decide, apply
	binds           prometheus.Counter
	bindSeconds     prometheus.Histogram
	evictions       *prometheus.CounterVec // rule, mode
	leader          prometheus.Gauge
	reloads         *prometheus.CounterVec // result
	requestsSeconds *prometheus.HistogramVec
	skippedRows     *prometheus.CounterVec // row: record, event
	refused         *prometheus.CounterVec // route, reason
	plan            *planCollector
}

// Label values of arbiter_evictions_total.
const (
	RulePreempt = "preempt" // S16, inside a project
	RuleReclaim = "reclaim" // S17, between projects
	ModeEvict   = "evict"   // the pods are deleted
	ModeSuspend = "suspend" // the owner is suspended and keeps its place in the queue
)

// New makes the registry with every arbiter_* metric, the Go runtime's and the process's.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		cycleSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arbiter_cycle_duration_seconds",
			Help: "Time one scheduling cycle spends deciding (settle, snapshot, plan) and applying (evictions and resumes awaited, binds handed to the workers).",
			// A cycle decides in about a millisecond on a small cluster and up to a few hundred
			// at 500 nodes and thousands of pods.
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms .. ~4 s
		}, []string{"phase"}),
		binds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_binds_total",
			Help: "Pods bound to a node by Arbiter (successful Binding calls).",
		}),
		bindSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "arbiter_pod_bind_latency_seconds",
			Help:    "Time from a pod's creation to its successful bind by Arbiter, queueing included.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_evictions_total",
			Help: "Workloads evicted to make room for others, by rule (preempt: S16 inside a project, reclaim: S17 between projects) and mode (evict: pods deleted, suspend: owner suspended).",
		}, []string{"rule", "mode"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "arbiter_leader",
			Help: "1 while this replica runs the scheduler loop (holds the lease), else 0.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_config_reloads_total",
			Help: "Reads of the scheduling configuration (dictionary, types, organization) from the database, the first at start included, by result (ok, failed).",
		}, []string{"result"}),
		requestsSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "arbiter_http_request_duration_seconds",
			Help:    "Console and API requests by route template (never the raw URL), method and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "code"}),
		skippedRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_workload_rows_skipped_total",
			Help: "Workload records and history events the database refused even with their text bounded, skipped so that the rest of their batch is written, by row (record, event).",
		}, []string{"row"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_refused_requests_total",
			Help: "Requests refused before any change: no or a bad credential, a role that does not allow it, an unknown API key or account at sign-in, a throttled sign-in; by route template and reason. The audit log keeps at most one row per reason and route a minute of these.",
		}, []string{"route", "reason"}),
		plan: newPlanCollector(),
	}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.cycleSeconds, r.binds, r.bindSeconds, r.evictions, r.leader, r.reloads, r.requestsSeconds, r.skippedRows, r.refused, r.plan,
	)
	// Series that exist from the start, so rate() and absent() alerts work before the first event.
	for _, rule := range []string{RulePreempt, RuleReclaim} {
		for _, mode := range []string{ModeEvict, ModeSuspend} {
			r.evictions.WithLabelValues(rule, mode)
		}
	}
	r.reloads.WithLabelValues("ok")
	r.reloads.WithLabelValues("failed")
	r.skippedRows.WithLabelValues("record")
	r.skippedRows.WithLabelValues("event")
	return r
}

// Handler serves the metrics in the Prometheus exposition formats.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg, Timeout: 10 * time.Second})
}

// Register adds a collector of another part of Arbiter (the database pool's, say).
func (r *Registry) Register(c prometheus.Collector) error {
	if r == nil {
		return nil
	}
	return r.reg.Register(c)
}

// Cycle records one scheduling cycle: how long it decided and applied, and, from its plan,
// the pending workloads and the GPUs of each node pool as they stand after it.
func (r *Registry) Cycle(decide, apply time.Duration, plan *scheduler.Plan) {
	if r == nil {
		return
	}
	r.cycleSeconds.WithLabelValues("decide").Observe(decide.Seconds())
	r.cycleSeconds.WithLabelValues("apply").Observe(apply.Seconds())
	if plan != nil {
		r.plan.set(plan)
	}
}

// Bound records one successful bind of a pod created at created.
func (r *Registry) Bound(created, at time.Time) {
	if r == nil {
		return
	}
	r.binds.Inc()
	if !created.IsZero() && !at.Before(created) {
		r.bindSeconds.Observe(at.Sub(created).Seconds())
	}
}

// Evicted records one workload evicted under rule, suspended or with its pods deleted.
func (r *Registry) Evicted(rule scheduler.Rule, suspended bool) {
	if r == nil {
		return
	}
	mode := ModeEvict
	if suspended {
		mode = ModeSuspend
	}
	r.evictions.WithLabelValues(ruleLabel(rule), mode).Inc()
}

func ruleLabel(rule scheduler.Rule) string {
	switch rule {
	case scheduler.RulePreemption:
		return RulePreempt
	case scheduler.RuleReclaim:
		return RuleReclaim
	}
	return string(rule)
}

// SetLeader says whether this replica runs the scheduler loop. Leader election calls it as it
// gains and loses the lease; without leader election the loop sets it once it runs.
func (r *Registry) SetLeader(leading bool) {
	if r == nil {
		return
	}
	if leading {
		r.leader.Set(1)
	} else {
		r.leader.Set(0)
	}
}

// ConfigLoaded records one read of the scheduling configuration and whether it failed.
func (r *Registry) ConfigLoaded(err error) {
	if r == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "failed"
	}
	r.reloads.WithLabelValues(result).Inc()
}

// Request records one HTTP request. route is the router's path template ("/api/v1/projects/:name"),
// empty when no route matched: the raw URL would give every probed path a series of its own.
func (r *Registry) Request(route, method string, status int, took time.Duration) {
	if r == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	r.requestsSeconds.WithLabelValues(route, method, strconv.Itoa(status)).Observe(took.Seconds())
}

// RowSkipped counts one workload record or history event (row: "record" or "event") the
// database refused and the recorder skipped (store.OnRecordSkipped).
func (r *Registry) RowSkipped(row string) {
	if r == nil {
		return
	}
	if row != "record" && row != "event" {
		row = "other"
	}
	r.skippedRows.WithLabelValues(row).Inc()
}

// Refused counts one refused request. route is the router's path template (empty: none
// matched) and reason one of the web layer's few refusal reasons; neither ever holds what a
// caller sent (a client id, a user name), so the series stay few.
func (r *Registry) Refused(route, reason string) {
	if r == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	r.refused.WithLabelValues(route, reason).Inc()
}
