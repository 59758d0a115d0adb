package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arbiterhq/arbiter/scheduler"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func controllerRef(apiVersion, kind, name, uid string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
}

func ownerObj(apiVersion, kind, name, uid string, owner *metav1.OwnerReference, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	u.SetNamespace("ns")
	u.SetUID(types.UID(uid))
	u.SetCreationTimestamp(metav1.NewTime(t0))
	if owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{*owner})
	}
	return u
}

func gpuPod(name, uid string, gpus int64, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid), CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))},
		Spec: corev1.PodSpec{SchedulerName: "arbiter", Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), "nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)},
		}}}},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

// TestS4_TopOwner: a pod's workload is its highest cached controller, except that a Job
// owned by a CronJob is its own workload and a bare pod is its own workload.
func TestS4_TopOwner(t *testing.T) {
	c := NewCache("arbiter")
	deploy := controllerRef("apps/v1", "Deployment", "serve", "d1")
	rs := controllerRef("apps/v1", "ReplicaSet", "serve-abc", "rs1")
	cron := controllerRef("batch/v1", "CronJob", "nightly", "cj1")
	job := controllerRef("batch/v1", "Job", "nightly-1", "j1")
	unknown := controllerRef("example.com/v1", "Gadget", "g", "g1")
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "Deployment", "serve", "d1", nil, nil)))
	c.UpsertOwner(ownerFrom(ownerObj("apps/v1", "ReplicaSet", "serve-abc", "rs1", &deploy, nil)))
	c.UpsertOwner(ownerFrom(ownerObj("batch/v1", "CronJob", "nightly", "cj1", nil, nil)))
	c.UpsertOwner(ownerFrom(ownerObj("batch/v1", "Job", "nightly-1", "j1", &cron, map[string]any{"parallelism": int64(2)})))
	c.UpsertPod(gpuPod("serve-abc-1", "p1", 1, &rs))
	c.UpsertPod(gpuPod("nightly-1-x", "p2", 1, &job))
	c.UpsertPod(gpuPod("nightly-1-y", "p3", 1, &job))
	c.UpsertPod(gpuPod("bare", "p4", 1, nil))
	c.UpsertPod(gpuPod("gadget-0", "p5", 1, &unknown))

	view := cycleView(c, t0.Add(time.Hour), &Settings{WorkloadTypes: []scheduler.WorkloadType{{Name: "Job", Group: "batch"}, {Name: "Deployment", Group: "apps"}, {Name: "Pod"}}})
	snap := view.Snapshot
	type got struct {
		UID, Kind, Name, Type string
		Pods                  int
		Bare                  bool
	}
	var gots []got
	for _, w := range snap.Workloads {
		_, meta := view.Workload(w.UID)
		gots = append(gots, got{w.UID, w.Kind, w.Name, w.Type, len(w.Pods), meta.Bare})
	}
	want := []got{
		{"d1", "Deployment", "serve", "Deployment", 1, false},
		{"g1", "Gadget", "g", "Gadget", 1, false},
		{"j1", "Job", "nightly-1", "Job", 2, false},
		{"p4", "Pod", "bare", "Pod", 1, true},
	}
	if d := cmp.Diff(want, gots); d != "" {
		t.Errorf("workloads (-want +got):\n%s", d)
	}
	for _, w := range snap.Workloads {
		if w.UID == "j1" && (w.Gang.Parallelism == nil || *w.Gang.Parallelism != 2) {
			t.Errorf("the Job's gang spec was not read: %+v", w.Gang)
		}
		if w.UID == "d1" && !w.QueuedAt.Equal(t0) {
			t.Errorf("queue time %s, want the Deployment's creation %s", w.QueuedAt, t0)
		}
	}
}

// TestS5_KubeflowAndRayGangFields reads replicas the way S5 sums them.
func TestS5_KubeflowAndRayGangFields(t *testing.T) {
	py := ownerFrom(ownerObj("kubeflow.org/v1", "PyTorchJob", "t", "u1", nil, map[string]any{
		"pytorchReplicaSpecs": map[string]any{"Master": map[string]any{"replicas": int64(1)}, "Worker": map[string]any{"replicas": int64(3)}},
		"runPolicy":           map[string]any{"suspend": true},
	}))
	if d := cmp.Diff([]int32{1, 3}, py.Gang.Replicas); d != "" || !py.Suspended {
		t.Errorf("PyTorchJob replicas (-want +got): %s; suspended %v", d, py.Suspended)
	}
	ray := ownerFrom(ownerObj("ray.io/v1", "RayCluster", "r", "u2", nil, map[string]any{
		"workerGroupSpecs": []any{map[string]any{"minReplicas": int64(2)}, map[string]any{"minReplicas": int64(1)}},
	}))
	if d := cmp.Diff([]int32{1, 2, 1}, ray.Gang.Replicas); d != "" {
		t.Errorf("RayCluster head + workers (-want +got): %s", d)
	}
}

// TestS3_OccupiedByOtherSchedulers: pods of other schedulers bound to a node count as used
// there; Arbiter's pods are workloads.
func TestS3_OccupiedByOtherSchedulers(t *testing.T) {
	c := NewCache("arbiter")
	c.UpsertNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}})
	foreign := gpuPod("other", "f1", 3, nil)
	foreign.Spec.SchedulerName = "default-scheduler"
	foreign.Spec.NodeName = "n1"
	c.UpsertPod(foreign)
	done := gpuPod("done", "f2", 4, nil)
	done.Spec.SchedulerName = "default-scheduler"
	done.Spec.NodeName = "n1"
	done.Status.Phase = corev1.PodSucceeded
	c.UpsertPod(done)
	snap := cycleView(c, t0, &Settings{}).Snapshot
	if len(snap.Workloads) != 0 {
		t.Errorf("other schedulers' pods became workloads: %v", snap.Workloads)
	}
	if n := snap.Nodes[0]; !n.Ready || n.Occupied.GPUs != 3 || n.Occupied.Pods != 1 {
		t.Errorf("node = %+v, want ready with 3 GPUs and 1 pod occupied by the running foreign pod", n)
	}
}

// TestS22_AssumedBindsCountUntilConfirmed: an assumed bind shows in the next snapshot even
// before the informer reports it, and a failed one is forgotten.
func TestS22_AssumedBindsCountUntilConfirmed(t *testing.T) {
	c := NewCache("arbiter")
	p := gpuPod("p", "u1", 1, nil)
	c.UpsertPod(p)
	c.Assume("u1", "n1", t0)
	c.UpsertPod(p) // a stale update without the node must not undo the assumption
	snap := cycleView(c, t0, &Settings{}).Snapshot
	if got := snap.Workloads[0].Pods[0].NodeName; got != "n1" {
		t.Fatalf("assumed pod is on %q, want n1", got)
	}
	c.Forget("u1")
	snap = cycleView(c, t0, &Settings{}).Snapshot
	if got := snap.Workloads[0].Pods[0].NodeName; got != "" || snap.Workloads[0].Phase != scheduler.PhasePending {
		t.Fatalf("after a failed bind the pod is on %q in phase %s", got, snap.Workloads[0].Phase)
	}
}

// TestS6_ProjectOf: project label, then KAI and Run:ai queue labels, then the namespace owner;
// a label naming no project is skipped.
func TestS6_ProjectOf(t *testing.T) {
	known := map[string]bool{"a": true, "b": true, "c": true}
	ns := map[string]string{"ns": "c"}
	cases := []struct {
		owner, pod map[string]string
		want       string
	}{
		{map[string]string{LabelProject: "a", LabelKAIQueue: "b"}, nil, "a"},
		{nil, map[string]string{LabelProject: "b"}, "b"},
		{map[string]string{LabelKAIQueue: "b"}, map[string]string{LabelRunAIQueue: "a"}, "b"},
		{map[string]string{LabelProject: "nope"}, nil, "c"},
		{nil, nil, "c"},
	}
	for i, tc := range cases {
		if got := projectOf(tc.owner, tc.pod, "ns", ns, known); got != tc.want {
			t.Errorf("case %d: project %q, want %q", i, got, tc.want)
		}
	}
}

func TestPodRequestsCountInitContainersAndOverhead(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}},
		Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}},
		},
		Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
	}
	want := scheduler.Resources{MilliCPU: 4100, Memory: 1 << 30, GPUs: 2, Pods: 1}
	if got := podRequests(spec); got != want {
		t.Errorf("requests = %+v, want %+v", got, want)
	}
}

func TestS4_TypeLabelMayUseDashes(t *testing.T) {
	bySlug := map[string]string{"standard-training": "Standard training"}
	o := &owner{Kind: "Job", Group: "batch", Labels: map[string]string{LabelWorkloadType: "Standard-Training"}}
	if got := workloadType(o, map[[2]string]string{{"batch", "Job"}: "Job"}, bySlug); got != "Standard training" {
		t.Errorf("type %q, want Standard training", got)
	}
}

// TestS23_AReasonWrittenIsNotTakenBackByAnOlderVersionOfThePod: the cache remembers the
// PodScheduled reason it writes, so that the next cycle does not write it again; a pod update
// from before that write (the watch delivers them in order) must not take it back, or the
// next cycle writes the same reason a second time. Once an update shows the write, the pod's
// updates say again what it has, whoever wrote it.
func TestS23_AReasonWrittenIsNotTakenBackByAnOlderVersionOfThePod(t *testing.T) {
	c := NewCache("arbiter")
	c.SetSettings(foreseeSettings())
	told := func(reason, message string) *corev1.Pod {
		p := gpuPod("p", "uid-p", 1, nil)
		if reason != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: message}}
		}
		return p
	}
	remembered := func() string {
		_, m := c.Snapshot(t0).Workload("uid-p")
		if m == nil || len(m.Pods) != 1 {
			t.Fatalf("the pod's workload: %+v", m)
		}
		return m.Pods[0].ScheduledReason
	}
	c.UpsertPod(told("", ""))
	c.SetScheduledReason("uid-p", "InsufficientCapacity\x00(8 free)", t0)
	for _, step := range []struct {
		name   string
		update *corev1.Pod
		want   string
	}{
		{"an update from before the write", told("", ""), "InsufficientCapacity\x00(8 free)"},
		{"an update with an older reason", told("GangIncomplete", "3 of 12"), "InsufficientCapacity\x00(8 free)"},
		{"the update with the write", told("InsufficientCapacity", "(8 free)"), "InsufficientCapacity\x00(8 free)"},
		{"a later update by someone else", told("Unschedulable", "taken"), "Unschedulable\x00taken"},
	} {
		c.UpsertPod(step.update)
		if got := remembered(); got != step.want {
			t.Errorf("after %s: remembered %q, want %q", step.name, got, step.want)
		}
	}
}
