package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
)

// TestS25_OpenProjectsGoByPriorityAcrossProjects: two open sibling projects with no deserved
// quota wait for the same 4 GPUs, a low-priority Job in "aaa" and a high-priority one in
// "zzz". Nobody is guaranteed those GPUs (S11's second phase), so the higher queue priority
// goes first: zzz's Job runs and aaa's waits. Fenced, as by default, the two would tie on S11's
// fairness and aaa, first by name, would run instead (TestS25_PriorityFencingAndOffsets).
func TestS25_OpenProjectsGoByPriorityAcrossProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	open := store.PolicyUpdate{PriorityPolicy: opt("open")}
	blockNs := e.project("block", 4, store.PolicyUpdate{})
	aaa := e.project("aaa", 0, open)
	zzz := e.project("zzz", 0, open)

	// A blocker holds the 4 GPUs until both Jobs wait, so that one cycle decides between them.
	e.job(jobSpec{name: "blocker", namespace: blockNs, gpus: 4})
	e.eventually("the blocker runs", time.Minute, func() bool { return e.running(blockNs, "blocker") == 1 })
	low := e.job(jobSpec{name: "low", namespace: aaa, gpus: 4, labels: labels("low", "preemptible")})
	high := e.job(jobSpec{name: "high", namespace: zzz, gpus: 4, labels: labels("high", "preemptible")})
	waiting := func(uid string) bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return err == nil && r.Reason == "InsufficientCapacity"
	}
	e.eventually("both Jobs wait for the blocker's GPUs", time.Minute, func() bool {
		return waiting(string(low.UID)) && waiting(string(high.UID))
	})

	background := metav1.DeletePropagationBackground
	if err := e.client.BatchV1().Jobs(blockNs).Delete(e.ctx, "blocker", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the open project with the higher queue priority runs", time.Minute, func() bool {
		return e.running(zzz, "high") == 1
	})
	if n := e.running(aaa, "low"); n != 0 {
		t.Errorf("aaa's low-priority Job runs %d pods; want it waiting behind zzz's high-priority one", n)
	}
	e.eventually("aaa's Job waits for GPUs", 10*time.Second, func() bool { return waiting(string(low.UID)) })
}
