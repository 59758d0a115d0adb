package kube

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/arbiterhq/arbiter/scheduler"
)

// TestS20_EachKindIsSuspendedByItsOwnSwitch: in suspend mode Arbiter flips the kind's own
// switch on the top owner and marks it as its suspension; resuming flips it back and takes the
// mark away. Kubeflow's jobs have spec.runPolicy.suspend, the others spec.suspend.
func TestS20_EachKindIsSuspendedByItsOwnSwitch(t *testing.T) {
	cases := []struct {
		file     string
		resource string
		path     []string
	}{
		{"pytorchjob.yaml", "pytorchjobs", []string{"spec", "runPolicy", "suspend"}},
		{"mpijob-v1.yaml", "mpijobs", []string{"spec", "runPolicy", "suspend"}},
		{"jobset.yaml", "jobsets", []string{"spec", "suspend"}},
		{"trainjob.yaml", "trainjobs", []string{"spec", "suspend"}},
		{"raycluster.yaml", "rayclusters", []string{"spec", "suspend"}},
		{"rayjob.yaml", "rayjobs", []string{"spec", "suspend"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ctx := context.Background()
			obj := readKind(t, tc.file)
			if err := unstructured.SetNestedField(obj.Object, false, tc.path...); err != nil {
				t.Fatal(err)
			}
			gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
			gvr := gv.WithResource(tc.resource)
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: obj.GetKind() + "List"}, obj)
			s := &Scheduler{dynamic: dyn, cache: NewCache("arbiter")}
			ref := ownerFrom(obj).ref()
			for _, suspend := range []bool{true, false} {
				if err := s.setSuspended(ctx, ref, suspend); err != nil {
					t.Fatalf("suspend %v: %v", suspend, err)
				}
				got, err := dyn.Resource(gvr).Namespace("ns").Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				on, _, _ := unstructured.NestedBool(got.Object, tc.path...)
				_, marked := got.GetAnnotations()[AnnotationSuspendedBy]
				if on != suspend || marked != suspend {
					t.Errorf("after suspend=%v: switch %v, marked %v", suspend, on, marked)
				}
				if o := ownerFrom(got); o.Suspended != suspend || arbiterSuspended(o) != suspend {
					t.Errorf("after suspend=%v the cache reads suspended %v, by Arbiter %v", suspend, o.Suspended, arbiterSuspended(o))
				}
			}
		})
	}
}

// TestS20_APyTorchJobIsSuspendedAndResumedWhole: in a project whose preemption mode is
// suspend, a running PyTorchJob preempted for higher-priority work is suspended through its
// run policy (not its pods evicted one by one); once its pods are gone and the room is free
// again, the cycle admits it from its master's and workers' templates and resumes it.
func TestS20_APyTorchJobIsSuspendedAndResumedWhole(t *testing.T) {
	ctx := context.Background()
	obj := readKind(t, "pytorchjob.yaml") // a master of 1 GPU, three workers of 2
	if err := unstructured.SetNestedField(obj.Object, false, "spec", "runPolicy", "suspend"); err != nil {
		t.Fatal(err)
	}
	pytorchjobs := schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{pytorchjobs: "PyTorchJobList"}, obj)
	settings := foreseeSettings()
	settings.Projects[0].Policy.PreemptionMode = scheduler.Suspend
	c := NewCache("arbiter")
	s := &Scheduler{opts: Options{SchedulerName: "arbiter", Observer: noObserver{}}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		client: fake.NewClientset(), dynamic: dyn, cache: c, lastReason: map[string]string{}, warned: map[string]bool{},
		workers: 1, tasks: make(chan func(context.Context), 1024), now: func() time.Time { return t0.Add(time.Hour) }}
	s.settings.Store(settings)
	c.UpsertNode(gpuNode("n1", 8))
	c.UpsertOwner(ownerFrom(obj))
	ref := controllerRef("kubeflow.org/v1", "PyTorchJob", obj.GetName(), string(obj.GetUID()))
	var victims []*corev1.Pod
	for i, gpus := range []int64{1, 2, 2, 2} {
		p := gpuPod(obj.GetName()+"-"+strconv.Itoa(i), "v"+strconv.Itoa(i), gpus, &ref)
		p.Spec.NodeName = "n1"
		p.Status.StartTime = &metav1.Time{Time: t0.Add(2 * time.Minute)}
		victims = append(victims, p)
		c.UpsertPod(p)
	}
	urgent := gpuPod("urgent", "u1", 4, nil)
	urgent.Labels = map[string]string{LabelPriority: "high"}
	c.UpsertPod(urgent)

	current := func() *unstructured.Unstructured {
		got, err := dyn.Resource(pytorchjobs).Namespace("ns").Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	s.cycle(ctx)
	got := current()
	if on, _, _ := unstructured.NestedBool(got.Object, "spec", "runPolicy", "suspend"); !on || got.GetAnnotations()[AnnotationSuspendedBy] == "" {
		t.Fatalf("the PyTorchJob is not suspended by Arbiter: suspend %v, annotations %v; evictions %+v, pending %+v", on, got.GetAnnotations(), s.Last().Plan.Evictions, s.Last().Plan.Pending)
	}
	// Its controller deletes its pods; the urgent pod is bound in their place, runs and ends.
	c.UpsertOwner(ownerFrom(got))
	for _, p := range victims {
		c.DeletePod(p.UID)
	}
	s.cycle(ctx)
	if binds := s.Last().Plan.Binds; len(binds) != 1 || binds[0].Pod.UID != string(urgent.UID) {
		t.Fatalf("binds %+v, want the urgent pod in the PyTorchJob's place", binds)
	}
	urgent.Spec.NodeName = "n1"
	c.UpsertPod(urgent)
	s.cycle(ctx)
	if w, _ := s.Last().View.Workload(string(obj.GetUID())); w == nil || w.Phase != scheduler.PhaseSuspended || len(w.Pods) != 4 {
		t.Fatalf("the suspended PyTorchJob is %+v, want it waiting with its master and three workers", w)
	}
	c.DeletePod(urgent.UID)
	s.cycle(ctx)
	got = current()
	if on, _, _ := unstructured.NestedBool(got.Object, "spec", "runPolicy", "suspend"); on || got.GetAnnotations()[AnnotationSuspendedBy] != "" {
		t.Errorf("the PyTorchJob is not resumed: suspend %v, annotations %v; resumes %+v, pending %+v",
			on, got.GetAnnotations(), s.Last().Plan.Resumes, s.Last().Plan.Pending)
	}
}
