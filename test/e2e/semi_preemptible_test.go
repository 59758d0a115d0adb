package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestS26_ElasticJobLosesAReplicaNotItsMinimum: a semi-preemptible elastic Job (parallelism 4,
// min-members 2) runs its minimum on its project's 2 deserved GPUs and 2 replicas on borrowed
// ones. Another project's in-quota Job reclaims 2 GPUs: the 2 replicas are evicted one by one,
// and the minimum's pods keep running, never restarted.
func TestS26_ElasticJobLosesAReplicaNotItsMinimum(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	elasticNs := e.project("elastic", 2, store.PolicyUpdate{})
	owner := e.project("owner", 2, store.PolicyUpdate{})

	elastic := e.job(jobSpec{name: "elastic", namespace: elasticNs, pods: 4, labels: labels("low", "semi-preemptible"),
		annotations: map[string]string{"arbiter.dev/min-members": "2"}})
	e.eventually("the elastic Job runs its minimum and 2 replicas beyond it", time.Minute, func() bool {
		return e.running(elasticNs, "elastic") == 4
	})
	before := map[string]bool{}
	for _, p := range e.jobPods(elasticNs, "elastic") {
		before[string(p.UID)] = true
	}

	mine := e.job(jobSpec{name: "mine", namespace: owner, pods: 2})
	e.eventually("the owner's in-quota Job runs", time.Minute, func() bool { return e.running(owner, "mine") == 2 })

	// Two of the first four pods still run, the same pods: the minimum was never restarted.
	kept := 0
	for _, p := range e.jobPods(elasticNs, "elastic") {
		if before[string(p.UID)] && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d of the elastic Job's first pods still run, want its minimum of 2", kept)
	}
	if n := e.running(elasticNs, "elastic"); n != 2 {
		t.Errorf("the elastic Job runs %d pods, want 2: its replicas' replacements have no free GPU", n)
	}
	evs := e.events(elasticNs, "elastic")
	if !slices.ContainsFunc(evs, func(ev string) bool {
		return strings.HasPrefix(ev, "Preempted: Replicas beyond its minimum") && strings.Contains(ev, "preempted by "+owner+"/mine under S17")
	}) {
		t.Errorf("the elastic Job's events do not tell the replicas' reclaim: %s", fmtEvents(evs))
	}
	e.eventually("the history tells the reclaim while the Job keeps running", 10*time.Second, func() bool {
		return slices.Contains(e.history(string(elastic.UID)), "Reclaimed")
	})
	if rec := e.record(string(elastic.UID)); rec.Phase == "Preempted" || rec.Preemptibility != store.SemiPreemptible {
		t.Errorf("the elastic Job is recorded %s and %s; want it still running, semi-preemptible", rec.Phase, rec.Preemptibility)
	}
	e.eventually("mine's history records its admission", 10*time.Second, func() bool {
		return slices.Contains(e.history(string(mine.UID)), "Admitted")
	})
}
