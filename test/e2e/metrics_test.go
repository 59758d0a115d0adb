package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/internal/metrics/exposition"
	"github.com/arbiterhq/arbiter/internal/testkit/poll"
	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

// TestMetricsCountWhatHappened scrapes /metrics while Jobs are bound, one is preempted and
// others wait, and checks each count against what happened in the cluster: every bound pod is
// one bind (and one bind latency), the preemption one eviction under S16 with its pods deleted,
// the waiting workloads appear under their project and the reason their pods carry, the pool's
// GPUs add up, and a request made shows under its route template.
func TestMetricsCountWhatHappened(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 2)
	ns := e.project("team", 2, store.PolicyUpdate{})
	project := "team-" + e.id
	pool := e.pool.Name

	e.job(jobSpec{name: "victim", namespace: ns, pods: 2, labels: labels("low", "preemptible")})
	e.eventually("the victim's 2 pods are bound and counted", time.Minute, func() bool {
		return e.running(ns, "victim") == 2 && value(scrape(t, e.a.URL), "arbiter_binds_total", nil) == 2
	})
	m := scrape(t, e.a.URL)
	expect(t, m, "arbiter_pod_bind_latency_seconds", nil, 2)
	expect(t, m, "arbiter_gpus", map[string]string{"pool": pool, "state": "allocated"}, 2)
	expect(t, m, "arbiter_gpus", map[string]string{"pool": pool, "state": "free"}, 0)
	expect(t, m, "arbiter_evictions_total", nil, 0)
	expect(t, m, "arbiter_leader", nil, 1)
	expect(t, m, "arbiter_config_reloads_total", map[string]string{"result": "failed"}, 0)
	if value(m, "arbiter_config_reloads_total", map[string]string{"result": "ok"}) < 1 {
		t.Error("no configuration load counted, though the scheduler runs on one")
	}
	for _, phase := range []string{"decide", "apply"} {
		if value(m, "arbiter_cycle_duration_seconds", map[string]string{"phase": phase}) < 1 {
			t.Errorf("no cycle's %s phase observed", phase)
		}
	}
	if value(m, "arbiter_db_pool_connections", map[string]string{"state": "total"}) < 1 || value(m, "arbiter_db_pool_max_connections", nil) < 1 {
		t.Error("the database pool shows no connections")
	}

	// A high-priority Job of the same project preempts the victim (S16); the victim's
	// recreated pods, a 2-pod gang, wait beside the urgent Job's 1 GPU.
	e.job(jobSpec{name: "urgent", namespace: ns, labels: labels("high", "")})
	e.eventually("the urgent Job runs", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })
	var reason string
	e.eventually("the victim's recreated pods wait with a reason", time.Minute, func() bool {
		reason, _ = e.pendingReason(ns, "victim")
		return reason != ""
	})
	// A Job in a namespace of no project waits too, under project "".
	orphan := "orphan-" + e.id
	if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: orphan}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.CoreV1().Namespaces().Delete(t.Context(), orphan, metav1.DeleteOptions{}) })
	e.job(jobSpec{name: "stray", namespace: orphan})
	// The victim's reason is read again each time: a pod's reason may move on (from waiting for
	// its preemptor's evictions to waiting for capacity, say) between one read and the gauge.
	poll.UntilNil(t, "both waiting workloads show in the pending gauge", time.Minute, func() error {
		reason, _ = e.pendingReason(ns, "victim")
		m := scrape(t, e.a.URL)
		mine := value(m, "arbiter_pending_workloads", map[string]string{"project": project, "reason": reason})
		stray := value(m, "arbiter_pending_workloads", map[string]string{"project": "", "reason": "NoProject"})
		if mine != 1 || stray != 1 {
			return fmt.Errorf("the victim's pods wait with reason %q; the gauge counts %v under it and %v under NoProject", reason, mine, stray)
		}
		return nil
	})
	m = scrape(t, e.a.URL)
	expect(t, m, "arbiter_binds_total", nil, 3) // the victim's 2 pods, then the urgent one
	expect(t, m, "arbiter_pod_bind_latency_seconds", nil, 3)
	expect(t, m, "arbiter_evictions_total", map[string]string{"rule": "preempt", "mode": "evict"}, 1)
	expect(t, m, "arbiter_evictions_total", nil, 1)
	expect(t, m, "arbiter_pending_workloads", nil, 2)
	expect(t, m, "arbiter_gpus", map[string]string{"pool": pool, "state": "allocated"}, 1)
	expect(t, m, "arbiter_gpus", map[string]string{"pool": pool, "state": "free"}, 1)
	expect(t, m, "arbiter_gpus", map[string]string{"pool": pool, "state": "borrowed"}, 0)

	// A request shows under its route template, its method and its status.
	route := map[string]string{"route": "/api/v1/org-unit/projects", "method": "GET", "code": "200"}
	before := value(m, "arbiter_http_request_duration_seconds", route)
	if status, _ := e.a.do(t, "GET", "/api/v1/org-unit/projects", ""); status != http.StatusOK {
		t.Fatalf("GET /api/v1/org-unit/projects = %d", status)
	}
	expect(t, scrape(t, e.a.URL), "arbiter_http_request_duration_seconds", route, before+1)
}

// TestMetricsOnTheirOwnAddress: with --metrics-addr, /metrics answers there and no longer on
// the console's port.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	t.Parallel()
	addr, err := devcluster.FreeAddr() // below the ports outgoing connections take meanwhile
	if err != nil {
		t.Fatal(err)
	}
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t), MetricsAddr: addr})
	res, err := http.Get(a.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the console's port = %d with --metrics-addr set, want 404", res.StatusCode)
	}
	m := scrape(t, "http://"+addr)
	if value(m, "arbiter_db_pool_max_connections", nil) < 1 {
		t.Error("the metrics listener shows no database pool")
	}
	if _, ok := m["arbiter_leader"]; !ok {
		t.Error("the metrics listener has no arbiter_leader")
	}
}

// scrape reads and parses base/metrics.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics = %d", base, res.StatusCode)
	}
	families, err := exposition.Parse(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// value sums the series of a metric whose labels include want: counters' and gauges' values,
// histograms' sample counts. A metric not exposed is 0.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	return exposition.Families(families).Value(name, want)
}

func expect(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	if got := value(families, name, labels); got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}
