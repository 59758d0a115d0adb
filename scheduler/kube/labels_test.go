package kube

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// TestS9_PatchWorkloadLabels: priority and preemptibility labels go on the top owner (a Job
// through the dynamic client, a bare pod through the core client); nil removes a label; an
// unknown or vanished workload is a WorkloadNotFoundError.
func TestS9_PatchWorkloadLabels(t *testing.T) {
	ctx := context.Background()
	job := ownerObj("batch/v1", "Job", "train", "j1", nil, map[string]any{"parallelism": int64(1)})
	job.SetLabels(map[string]string{LabelPreemptibility: "preemptible", "team": "a"})
	pod := gpuPod("solo", "p1", 1, nil)
	gone := ownerObj("batch/v1", "Job", "gone", "j2", nil, nil) // cached, but deleted from the cluster

	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{jobs: "JobList"}, job)
	s := &Scheduler{client: fake.NewClientset(pod), dynamic: dyn, cache: NewCache("arbiter")}
	s.cache.UpsertOwner(ownerFrom(job))
	s.cache.UpsertOwner(ownerFrom(gone))
	s.cache.UpsertPod(pod)

	high := "high"
	if err := s.Workloads().PatchWorkloadLabels(ctx, "j1", map[string]*string{LabelPriority: &high, LabelPreemptibility: nil}); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(jobs).Namespace("ns").Get(ctx, "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := got.GetLabels(); len(l) != 2 || l[LabelPriority] != "high" || l["team"] != "a" {
		t.Errorf("job labels = %v, want priority high, preemptibility removed, others kept", l)
	}

	np := "non-preemptible"
	if err := s.Workloads().PatchWorkloadLabels(ctx, "p1", map[string]*string{LabelPreemptibility: &np}); err != nil {
		t.Fatal(err)
	}
	p, err := s.client.CoreV1().Pods("ns").Get(ctx, "solo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels[LabelPreemptibility] != "non-preemptible" {
		t.Errorf("pod labels = %v", p.Labels)
	}

	for _, uid := range []string{"nope", "j2"} {
		var nf *WorkloadNotFoundError
		if err := s.Workloads().PatchWorkloadLabels(ctx, uid, map[string]*string{LabelPriority: &high}); !errors.As(err, &nf) || !nf.NotFound() {
			t.Errorf("workload %s: err = %v, want WorkloadNotFoundError", uid, err)
		}
	}

	// A workload known only from the last cycle (a kind Arbiter does not watch) is named.
	gadget := controllerRef("example.com/v1", "Gadget", "g", "g1")
	lastCycle := NewCache("arbiter")
	lastCycle.UpsertPod(gpuPod("g-0", "pg", 1, &gadget))
	s.last.Store(&Result{View: cycleView(lastCycle, t0, &Settings{})})
	if err := s.Workloads().PatchWorkloadLabels(ctx, "g1", map[string]*string{LabelPriority: &high}); err == nil || errors.As(err, new(*WorkloadNotFoundError)) {
		t.Errorf("unwatched kind: err = %v, want a plain error naming the kind", err)
	}
}
