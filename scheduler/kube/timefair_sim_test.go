package kube

import (
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/internal/dev/devcluster"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// TestS28_TwoProjectsTakeTurnsThroughTheLoop is KAI's example of time-aware fairness through
// the real scheduling loop (its cache, its account of past use, Plan and apply) on a simulated
// control plane: one pool of one 16-GPU node, projects a and b with nothing deserved and
// equal weights, each always with a 16-GPU Job of 5 minutes waiting, for two hours. Without
// S28 a, first by name, gets the GPUs every time they free up; with S28 (window 40 min,
// half-life 10 min) the project that used the pool less gets them, and each receives half the
// GPU-hours within ±10 %.
func TestS28_TwoProjectsTakeTurnsThroughTheLoop(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		a, b := takeTurns(t, on)
		t.Logf("S28 on: %v; GPU-hours a %.1f, b %.1f", on, a, b)
		if !on && b > 0.5 {
			t.Errorf("without S28 b received %.1f GPU-hours; a, first by name, should keep the pool", b)
		}
		if share := a / (a + b); on && (share < 0.45 || share > 0.55) {
			t.Errorf("with S28 a received %.0f %% of the GPU-hours, b %.0f %%; each should receive half within ±10 %%", 100*share, 100*(1-share))
		}
	}
}

// takeTurns runs the example and returns the GPU-hours each project received.
func takeTurns(t *testing.T, on bool) (a, b float64) {
	t.Helper()
	start := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	s := simSettings()
	s.NodePools = []scheduler.NodePool{{Name: "gpu", LabelKey: devcluster.LabelNodePool, LabelValue: "gpu",
		TimeBasedFairness: scheduler.TimeBasedFairness{Enabled: on, Window: 40 * time.Minute, HalfLife: 10 * time.Minute, KValue: 1}}}
	s.Departments = nil
	s.Projects, s.NamespaceProject = nil, map[string]string{}
	for _, name := range []string{"a", "b"} {
		s.Projects = append(s.Projects, scheduler.Project{Name: name,
			Quotas: map[string]scheduler.Quota{"gpu": {Deserved: 0, Limit: scheduler.NoLimit, OverQuotaWeight: 1}}})
		s.NamespaceProject[name] = name
	}
	pools, err := devcluster.ParseNodeSpec("gpu=1x16")
	if err != nil {
		t.Fatal(err)
	}
	node := pools[0].Node(0)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	c := newSimCluster(1, start, s, []*corev1.Node{node})

	// each project always has a Job that has not started
	stream := func() {
		waiting := map[string]int{}
		for _, j := range c.demoJobs() {
			if len(j.Status.Conditions) == 0 && !c.started(&j) {
				waiting[j.Namespace]++
			}
		}
		for _, p := range []string{"a", "b"} {
			if waiting[p] == 0 {
				c.createJob(objects.Job("", p).GenerateName(p+"-").Pods(1).GPUs(16).CPU("1").Memory("1Gi").
					Priority("low").Preemptible().PodAnnotation(devcluster.AnnotationRunSeconds, strconv.Itoa(300)).
					SchedulerName("arbiter").Container("main", "example.invalid/train:1").Obj())
			}
		}
	}
	stream()
	var last time.Time
	held := map[string]int64{}
	gpuSeconds := map[string]float64{}
	c.runUntil(start.Add(2*time.Hour), 10*time.Second, stream, func(r *Result) {
		if !last.IsZero() {
			for p, n := range held {
				gpuSeconds[p] += float64(n) * r.At.Sub(last).Seconds()
			}
		}
		last = r.At
		clear(held)
		for _, q := range r.Plan.Projects {
			held[q.Name] += q.Allocated
		}
	})
	return gpuSeconds["a"] / 3600, gpuSeconds["b"] / 3600
}

// started reports whether any of a Job's pods has been bound.
func (c *simCluster) started(j *batchv1.Job) bool {
	for _, pu := range c.podsOf(j.UID) {
		if c.pods[pu].Spec.NodeName != "" {
			return true
		}
	}
	return false
}
