package kube

import (
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// BenchmarkFillCycle is one cycle of the end-to-end fill as the scheduler runs it, cache
// included: 500 nodes x 8 GPUs, 3,500 one-GPU Jobs running, and each cycle one new Job's pod
// arriving, settled, snapshotted, planned and assumed bound.
func BenchmarkFillCycle(b *testing.B) {
	c := NewCache("arbiter")
	for i := range 500 {
		c.UpsertNode(&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + strconv.Itoa(i), Labels: map[string]string{"pool": "a100"}},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8")}, Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"),
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"), "nvidia.com/gpu": resource.MustParse("8"),
			}, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
	}
	settings := &Settings{
		WorkloadTypes:    []scheduler.WorkloadType{{Name: "Job", Group: "batch", Category: "Train"}},
		Categories:       []scheduler.Category{{Name: "Train"}},
		NodePools:        []scheduler.NodePool{{Name: "a100", LabelKey: "pool", LabelValue: "a100"}},
		Departments:      []scheduler.Department{{Name: "dept", Quotas: map[string]scheduler.Quota{"a100": {Deserved: 4000, Limit: scheduler.NoLimit}}}},
		Projects:         []scheduler.Project{{Name: "proj", Department: "dept", Quotas: map[string]scheduler.Quota{"a100": {Deserved: 4000, Limit: scheduler.NoLimit}}}},
		NamespaceProject: map[string]string{"ns": "proj"},
	}
	seq := 0
	// newJob builds the next Job; add brings it and its pod into the cache, the pod bound to
	// node ("" for pending).
	newJob := func() *batchv1.Job {
		name := "job-" + strconv.Itoa(seq)
		seq++
		return objects.Job(name, "ns").UID("uid-" + name).Created(t0).Obj()
	}
	add := func(node string, job *batchv1.Job) types.UID {
		name, uid := job.Name, job.UID
		c.UpsertOwner(ownerFromJob(job))
		ref := controllerRef("batch/v1", "Job", name, string(uid))
		p := gpuPod(name+"-abcde", "pod-"+name, 1, &ref)
		p.Labels = map[string]string{"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": string(uid)}
		p.Spec.NodeName = node
		c.UpsertPod(p)
		return p.UID
	}
	for i := range 3500 {
		add("node-"+strconv.Itoa(i/8), newJob())
	}
	now := t0.Add(time.Hour)
	prev := cycleView(c, now, settings)
	prev.CompareWith(nil)
	next := newJob() // built outside the timer: the cycle is measured, not the test's objects
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		pod := add("", next)
		// As Scheduler.cycle takes its view: settings, settle, snapshot, what was rebuilt.
		view := cycleView(c, now, settings)
		view.CompareWith(prev)
		prev = view
		plan := view.Snapshot.Plan()
		if len(plan.Binds) != 1 {
			b.Fatalf("binds = %d, want 1 (pending %v)", len(plan.Binds), plan.Pending)
		}
		c.Assume(pod, plan.Binds[0].Node, now)
		// The pod is bound by the API server; the cache hears so from the informer.
		b.StopTimer()
		c.DeletePod(pod)
		next = newJob()
		b.StartTimer()
	}
}
