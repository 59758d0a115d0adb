package e2e

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/server"
)

// TestEstimateAccuracyOnTheDemo measures the start estimate on the demo's trickle
// (docs/scheduling.md "Estimated start"): every 5 s it reads the waiting workloads' estimates,
// and once they start compares the first estimate each was given, and the last before it
// started, with the start the records show. It reports figures and asserts nothing about them
// (a measurement, not a pass/fail test), so it runs only when ARBITER_ESTIMATE_ACCURACY names a
// duration, e.g. ARBITER_ESTIMATE_ACCURACY=12m.
func TestEstimateAccuracyOnTheDemo(t *testing.T) {
	run, err := time.ParseDuration(os.Getenv("ARBITER_ESTIMATE_ACCURACY"))
	if err != nil || run <= 0 {
		t.Skip("set ARBITER_ESTIMATE_ACCURACY to a duration to measure the start estimate on the demo")
	}
	c := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), run+5*time.Minute)
	defer cancel()
	pools, err := devcluster.ParseNodeSpec(devcluster.DefaultNodes)
	if err != nil {
		t.Fatal(err)
	}
	if err := devcluster.AddNodes(ctx, c.Client(), pools); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range pools {
			for i := 0; i < p.Nodes; i++ {
				_ = c.Client().CoreV1().Nodes().Delete(context.Background(), p.NodeName(i), metav1.DeleteOptions{})
			}
		}
	})
	if err := devcluster.WaitNodesReady(ctx, c.Client(), pools); err != nil {
		t.Fatal(err)
	}
	a := startArbiter(t, server.Config{DatabaseURL: freshDatabase(t), Kubeconfig: c.Kubeconfig(), SchedulerName: "arbiter-demo", Demo: true})

	type seen struct {
		first, last   time.Time // the first and the last estimate given while it waited
		firstAt       time.Time // when the first was read
		started       time.Time
		unknownPolled int // polls at which it waited without an estimate
		polled        int
	}
	byID := map[string]*seen{}
	end := time.Now().Add(run)
	for time.Now().Before(end) {
		status, body := a.do(t, "GET", "/api/v1/workloads?limit=500", "")
		if status != 200 {
			t.Fatalf("GET /api/v1/workloads = %d %v", status, body)
		}
		list, _ := body["workloads"].([]any)
		now := time.Now()
		for _, item := range list {
			w, _ := item.(map[string]any)
			id, _ := w["id"].(string)
			phase, _ := w["k8sPhase"].(string) // Arbiter's phase
			s := byID[id]
			if s == nil {
				s = &seen{}
				byID[id] = s
			}
			if started, ok := w["startedAt"].(string); ok && s.started.IsZero() && s.polled > 0 {
				s.started, _ = time.Parse(time.RFC3339Nano, started)
			}
			if phase != "Pending" {
				continue
			}
			s.polled++
			est, _ := w["estimatedStartAt"].(string)
			at, _ := time.Parse(time.RFC3339Nano, est)
			if at.IsZero() {
				s.unknownPolled++
				continue
			}
			if s.first.IsZero() {
				s.first, s.firstAt = at, now
			}
			s.last = at
		}
		time.Sleep(5 * time.Second) // the sampling period: a measurement over run, nothing to wait for
	}

	var firstErr, lastErr []time.Duration
	var waited, estimated, polls, unknown int
	for _, s := range byID {
		polls += s.polled
		unknown += s.unknownPolled
		if s.polled == 0 || s.started.IsZero() {
			continue
		}
		waited++
		if s.first.IsZero() {
			continue
		}
		estimated++
		firstErr = append(firstErr, abs(s.first.Sub(s.started)))
		lastErr = append(lastErr, abs(s.last.Sub(s.started)))
	}
	t.Logf("%s of the demo: %d workloads waited and then started, %d of them had an estimate; %d of %d polls of a waiting workload found no estimate",
		run, waited, estimated, unknown, polls)
	t.Logf("first estimate: median absolute error %s, 90th percentile %s", pct(firstErr, 50), pct(firstErr, 90))
	t.Logf("last estimate before starting: median absolute error %s, 90th percentile %s", pct(lastErr, 50), pct(lastErr, 90))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(time.Second)
}
