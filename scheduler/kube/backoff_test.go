package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// oneWorkload is a cache of one 8-GPU node and a bare pod, and whether the pod's workload is
// in a cycle's view at a time.
func oneWorkload(pod *corev1.Pod) (*Cache, func(time.Time) bool) {
	c := NewCache("arbiter")
	c.UpsertNode(gpuNode("n1", 8))
	c.UpsertPod(pod)
	return c, func(at time.Time) bool {
		w, _ := cycleView(c, at, &Settings{}).Workload(string(pod.UID))
		return w != nil
	}
}

// TestS22_AFailedBindHoldsItsPodBack: a pod whose bind failed is left out of the snapshots
// for a delay that doubles with each failure (1 s, 2 s, ... 10 s), and its workload is back
// once the delay has passed; a workload with a pod bound stays in them (what it holds counts).
func TestS22_AFailedBindHoldsItsPodBack(t *testing.T) {
	c, present := oneWorkload(gpuPod("alone", "a1", 1, nil))
	at := t0
	for _, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		c.Assume("a1", "n1", at)
		c.BindFailed("a1", at)
		if present(at.Add(delay - time.Millisecond)) {
			t.Errorf("the pod is back %v after its failed bind, want %v", delay-time.Millisecond, delay)
		}
		at = at.Add(delay)
		if !present(at) {
			t.Errorf("the pod is not back %v after its failed bind", delay)
		}
	}

	// Bound at last: nothing is held back any more.
	bound := gpuPod("alone", "a1", 1, nil)
	bound.Spec.NodeName = "n1"
	c.UpsertPod(bound)
	c.UpsertPod(gpuPod("alone", "a1", 1, nil)) // (evicted and made again, say)
	c.Assume("a1", "n1", at)
	c.BindFailed("a1", at)
	if present(at.Add(time.Second-time.Millisecond)) || !present(at.Add(time.Second)) {
		t.Errorf("after a bind the delay starts again from a second")
	}

	// A gang one pod of which is bound stays in the snapshot while the other is held back.
	job := gpuJob("gang", 2, 1, nil)
	job.UID = "gang-uid"
	c.UpsertOwner(ownerFromJob(job))
	ref := controllerRef("batch/v1", "Job", "gang", "gang-uid")
	first := gpuPod("gang-0", "g0", 1, &ref)
	first.Spec.NodeName = "n1"
	c.UpsertPod(first)
	c.UpsertPod(gpuPod("gang-1", "g1", 1, &ref))
	c.Assume("g1", "n1", at)
	c.BindFailed("g1", at)
	if w, _ := cycleView(c, at, &Settings{}).Workload("gang-uid"); w == nil {
		t.Errorf("a gang with a pod bound is left out while its other pod is held back: what it holds is not counted")
	}
}

// TestS19_AFailedEvictionHoldsItsPreemptorBack: the preemptor an eviction failed for
// (HoldBack) is left out of the snapshots for a delay that doubles with each failure; it is
// back once the delay has passed, and its backoff is forgotten once it is bound, or
// backoffMost after the delay ended without another failure.
func TestS19_AFailedEvictionHoldsItsPreemptorBack(t *testing.T) {
	c, present := oneWorkload(gpuPod("preemptor", "p1", 8, nil))
	c.HoldBack("p1", t0)
	c.HoldBack("p1", t0) // a second failure: 2 s
	if present(t0.Add(2*time.Second - time.Millisecond)) {
		t.Errorf("the preemptor is back before its 2 s")
	}
	if !present(t0.Add(2 * time.Second)) {
		t.Errorf("the preemptor is not back after its 2 s")
	}
	// Not renewed for backoffMost after its delay ended: forgotten, the next failure holds it
	// back for a second again.
	later := t0.Add(2*time.Second + backoffMost + time.Second)
	cycleView(c, later, &Settings{})
	c.HoldBack("p1", later)
	if present(later.Add(time.Second-time.Millisecond)) || !present(later.Add(time.Second)) {
		t.Errorf("a backoff not renewed for %v is not forgotten", backoffMost)
	}
	// Bound: forgotten at once.
	c.HoldBack("p1", later)
	c.MarkBound("p1", later)
	if !present(later) {
		t.Errorf("a preemptor bound is still held back")
	}
}
