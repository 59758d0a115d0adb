package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/arbiterhq/arbiter/internal/metrics"
	"github.com/arbiterhq/arbiter/internal/metrics/exposition"
	"github.com/arbiterhq/arbiter/internal/testkit/testdb"
	"github.com/arbiterhq/arbiter/scheduler"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestPlanGaugesFollowTheLastPlan: pending workloads are counted by project and reason code,
// a pool's borrowed GPUs are its projects' summed, free never goes below zero, and what the
// next plan no longer has is gone from the scrape (no stale series).
func TestPlanGaugesFollowTheLastPlan(t *testing.T) {
	r := metrics.New()
	r.Cycle(2*time.Millisecond, time.Millisecond, &scheduler.Plan{
		Pending: []scheduler.PendingWorkload{
			{Project: "a", Reason: scheduler.InsufficientCapacity, Message: "wait for 2 GPUs"},
			{Project: "a", Reason: scheduler.InsufficientCapacity, Message: "wait for 4 GPUs"},
			{Project: "b", Reason: scheduler.OverLimit},
			{Reason: scheduler.NoProject},
		},
		Projects: []scheduler.QueueStatus{{Name: "a", NodePool: "p", Borrowed: 3}, {Name: "b", NodePool: "p", Borrowed: 1}, {Name: "a", NodePool: "q"}},
		NodePools: []scheduler.NodePoolStatus{
			{Name: "p", GPUs: 8, AllocatedGPUs: 6},
			{Name: "q", GPUs: 2, AllocatedGPUs: 3}, // other schedulers' pods beyond allocatable
		},
	})
	m := scrape(t, r)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"arbiter_pending_workloads", map[string]string{"project": "a", "reason": "InsufficientCapacity"}, 2},
		{"arbiter_pending_workloads", map[string]string{"project": "b", "reason": "OverLimit"}, 1},
		{"arbiter_pending_workloads", map[string]string{"project": "", "reason": "NoProject"}, 1},
		{"arbiter_gpus", map[string]string{"pool": "p", "state": "allocated"}, 6},
		{"arbiter_gpus", map[string]string{"pool": "p", "state": "free"}, 2},
		{"arbiter_gpus", map[string]string{"pool": "p", "state": "borrowed"}, 4},
		{"arbiter_gpus", map[string]string{"pool": "q", "state": "free"}, 0},
		{"arbiter_cycle_duration_seconds", map[string]string{"phase": "decide"}, 1},
		{"arbiter_cycle_duration_seconds", map[string]string{"phase": "apply"}, 1},
	} {
		if got := value(m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n := len(m["arbiter_pending_workloads"].GetMetric()); n != 3 {
		t.Errorf("%d pending series, want 3: the message is not a label", n)
	}

	r.Cycle(time.Millisecond, time.Millisecond, &scheduler.Plan{NodePools: []scheduler.NodePoolStatus{{Name: "p", GPUs: 8}}})
	m = scrape(t, r)
	if n := len(m["arbiter_pending_workloads"].GetMetric()); n != 0 {
		t.Errorf("%d pending series after a plan with none pending", n)
	}
	if got := value(m, "arbiter_gpus", map[string]string{"pool": "q"}); got != 0 || len(m["arbiter_gpus"].GetMetric()) != 3 {
		t.Errorf("pool q, gone from the plan, still shows (%v GPUs, %d series)", got, len(m["arbiter_gpus"].GetMetric()))
	}
}

// TestEventsAreCountedByTheirLabels: evictions by rule and mode, reloads by result, binds with
// their latency, the leader gauge; a nil registry takes every call without effect.
func TestEventsAreCountedByTheirLabels(t *testing.T) {
	r := metrics.New()
	m := scrape(t, r)
	if n := len(m["arbiter_evictions_total"].GetMetric()); n != 4 {
		t.Errorf("%d eviction series before any eviction, want all 4 at zero", n)
	}
	r.Evicted(scheduler.RulePreemption, false)
	r.Evicted(scheduler.RuleReclaim, true)
	r.Evicted(scheduler.RuleReclaim, true)
	r.ConfigLoaded(nil)
	r.ConfigLoaded(errors.New("database down"))
	created := time.Now().Add(-3 * time.Second)
	r.Bound(created, created.Add(3*time.Second))
	r.Bound(time.Time{}, time.Now()) // creation unknown: a bind, no latency
	r.SetLeader(true)
	r.Request("/api/v1/projects/:id", "BREW", 418, time.Millisecond)
	r.RowSkipped("record")
	m = scrape(t, r)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"arbiter_evictions_total", map[string]string{"rule": "preempt", "mode": "evict"}, 1},
		{"arbiter_evictions_total", map[string]string{"rule": "reclaim", "mode": "suspend"}, 2},
		{"arbiter_evictions_total", map[string]string{"mode": "suspend", "rule": "preempt"}, 0},
		{"arbiter_config_reloads_total", map[string]string{"result": "ok"}, 1},
		{"arbiter_config_reloads_total", map[string]string{"result": "failed"}, 1},
		{"arbiter_binds_total", nil, 2},
		{"arbiter_pod_bind_latency_seconds", nil, 1},
		{"arbiter_leader", nil, 1},
		{"arbiter_workload_rows_skipped_total", map[string]string{"row": "record"}, 1},
		{"arbiter_workload_rows_skipped_total", map[string]string{"row": "event"}, 0},
		{"arbiter_http_request_duration_seconds", map[string]string{"route": "/api/v1/projects/:id", "method": "other", "code": "418"}, 1},
	} {
		if got := value(m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if sum := m["arbiter_pod_bind_latency_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); sum < 2.9 || sum > 3.1 {
		t.Errorf("bind latency sum %v s, want 3", sum)
	}

	var none *metrics.Registry
	none.Cycle(time.Second, time.Second, &scheduler.Plan{})
	none.Bound(created, time.Now())
	none.Evicted(scheduler.RuleReclaim, false)
	none.SetLeader(true)
	none.ConfigLoaded(nil)
	none.Request("/", "GET", 200, time.Second)
	if err := none.Register(nil); err != nil {
		t.Error(err)
	}
}

// TestDBPoolCollectorReadsThePool: the pool's connections show by state, while one is held.
func TestDBPoolCollectorReadsThePool(t *testing.T) {
	pool := testdb.New(t)
	r := metrics.New()
	if err := r.Register(metrics.DBPool(pool)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := scrape(t, r)
	conn.Release()
	if got := value(m, "arbiter_db_pool_connections", map[string]string{"state": "acquired"}); got != 1 {
		t.Errorf("%v connections acquired while the test holds one", got)
	}
	if total, max := value(m, "arbiter_db_pool_connections", map[string]string{"state": "total"}), value(m, "arbiter_db_pool_max_connections", nil); total < 1 || max != float64(pool.Config().MaxConns) {
		t.Errorf("total %v, max %v; want at least 1 and %d", total, max, pool.Config().MaxConns)
	}
	if _, ok := m["arbiter_db_pool_empty_acquires_total"]; !ok {
		t.Error("no arbiter_db_pool_empty_acquires_total")
	}
}

func scrape(t *testing.T, r *metrics.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	families, err := exposition.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func value(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	return exposition.Families(families).Value(name, want)
}
