package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/workload/objects"
)

// TestS7_S8_LabelsOverrideTypeDefaults: priorityClassName and kai.scheduler/preemptibility
// labels on the Job override the Job type's defaults (high, non-preemptible); an invalid
// value is skipped with a Warning event and the default applies.
func TestS7_S8_LabelsOverrideTypeDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8)
	ns := e.project("labels", 8, store.PolicyUpdate{})
	labeled := e.job(jobSpec{name: "labeled", namespace: ns, labels: labels("very-low", "preemptible")})
	invalid := e.job(jobSpec{name: "invalid", namespace: ns, labels: labels("ultra", "sometimes")})
	plain := e.job(jobSpec{name: "plain", namespace: ns})
	for _, name := range []string{"labeled", "invalid", "plain"} {
		e.eventually(name+" runs", time.Minute, func() bool { return e.running(ns, name) == 1 })
	}
	want := map[string][2]string{
		string(labeled.UID): {"very-low", "preemptible"},
		string(invalid.UID): {"high", "non-preemptible"},
		string(plain.UID):   {"high", "non-preemptible"},
	}
	for uid, w := range want {
		e.eventually("the record of "+uid+" shows its resolved priority", 10*time.Second, func() bool {
			r, err := e.store.WorkloadRecord(e.ctx, uid)
			return err == nil && r.PriorityName == w[0] && r.Preemptibility == w[1]
		})
	}
	e.eventually("the invalid labels are reported", 10*time.Second, func() bool {
		evs := e.events(ns, "invalid")
		return hasEvent(evs, "InvalidPriority: ") && hasEvent(evs, "InvalidPreemptibility: ")
	})
	if evs := e.events(ns, "labeled"); hasEvent(evs, "InvalidPriority") {
		t.Errorf("valid labels were reported invalid: %s", fmtEvents(evs))
	}
}

// TestS1_PriorityClassesAreKeptInSync: the dictionary exists in the cluster as PriorityClasses
// with preemptionPolicy Never, and so do its aliases (KAI's and older Run:ai's class names,
// S7) with their entry's value; a deleted or changed one is put back; the API reports Synced.
// An alias class that is not Arbiter's (KAI's own, where KAI is installed too) is left as it is.
func TestS1_PriorityClassesAreKeptInSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 1)
	check := func() string {
		list, err := e.client.SchedulingV1().PriorityClasses().List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=arbiter"})
		if err != nil {
			return err.Error()
		}
		var got []string
		for _, pc := range list.Items {
			if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptNever {
				return pc.Name + " may preempt"
			}
			got = append(got, fmt.Sprintf("%s=%d", pc.Name, pc.Value))
		}
		sort.Strings(got)
		return strings.Join(got, ",")
	}
	want := "build-preemptible=80,build=125,high=125,inference=150,interactive-preemptible=80,low=40,medium-high=90,medium-low=65,medium=80," +
		"train=40,very-high=150,very-low=25"
	e.eventually("the seven PriorityClasses and the five aliases exist", 30*time.Second, func() bool { return check() == want })

	// Someone edits the cluster behind Arbiter's back: it is corrected.
	if err := e.client.SchedulingV1().PriorityClasses().Delete(e.ctx, "medium", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("a deleted PriorityClass is recreated", 30*time.Second, func() bool { return check() == want })

	status, body := e.a.do(t, "GET", "/api/v1/workload-priorities?filterBy=name==high", "")
	prios, _ := body["priorities"].([]any)
	if status != 200 || len(prios) != 1 || prios[0].(map[string]any)["clusterStatus"] != "Synced" {
		t.Errorf("GET priorities = %d %v, want high Synced", status, body)
	}

	// KAI's own train class (value 50, not Arbiter's) takes the place of Arbiter's: every
	// Arbiter on this cluster leaves it as it is, through a sync that puts back another class.
	classes := e.client.SchedulingV1().PriorityClasses()
	kaiTrain := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train", Labels: map[string]string{"app": "kai-scheduler"}},
		Value: 50, Description: "KAI's train"}
	t.Cleanup(func() { _ = classes.Delete(context.Background(), "train", metav1.DeleteOptions{}) })
	e.eventually("KAI's train class replaces Arbiter's", 30*time.Second, func() bool {
		if pc, err := classes.Get(e.ctx, "train", metav1.GetOptions{}); err == nil && pc.Labels["app"] == "kai-scheduler" {
			return true
		}
		_ = classes.Delete(e.ctx, "train", metav1.DeleteOptions{})
		_, err := classes.Create(e.ctx, kaiTrain, metav1.CreateOptions{})
		return err == nil
	})
	if err := classes.Delete(e.ctx, "build", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	withoutTrain := strings.Replace(want, "train=40,", "", 1)
	e.eventually("a deleted alias class is recreated", 30*time.Second, func() bool { return check() == withoutTrain })
	if pc, err := classes.Get(e.ctx, "train", metav1.GetOptions{}); err != nil || pc.Value != 50 || pc.Labels["app"] != "kai-scheduler" {
		t.Errorf("KAI's train class after a sync = %v, %v; want it left as KAI made it", pc, err)
	}
}

// gpuPod creates a one-GPU pod of Arbiter's under owner (nil: a bare pod); edits change it
// before it is created (an annotation for the cluster's kwok stages).
func gpuPod(e *env, name, namespace string, owner *metav1.OwnerReference, edits ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			SchedulerName: e.sched,
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/x:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
			}}},
		},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	for _, edit := range edits {
		edit(p)
	}
	created, err := e.client.CoreV1().Pods(namespace).Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return created
}

func (e *env) podsBound(namespace string, names ...string) int {
	n := 0
	for _, name := range names {
		p, err := e.client.CoreV1().Pods(namespace).Get(e.ctx, name, metav1.GetOptions{})
		if err == nil && p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// TestS4_S5_WorkloadKinds: a PyTorchJob, its pods made by training-operator, is one workload
// whose gang is the sum of its replicas (S5), placed all or nothing; a Deployment's pods are
// one workload of type Deployment; a bare pod is its own workload.
func TestS4_S5_WorkloadKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 4)
	ns := e.project("kinds", 8, store.PolicyUpdate{})

	// A bare pod takes one of the four GPUs.
	bare := gpuPod(e, "bare", ns, nil)
	e.eventually("the bare pod runs", time.Minute, func() bool { return e.podsBound(ns, "bare") == 1 })

	created := e.create(pyTorchJobGVR, ns, fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {schedulerName: %[1]s, containers: [%[2]s]}}
    Worker:
      replicas: 3
      template: {spec: {schedulerName: %[1]s, containers: [%[2]s]}}
`, e.sched, gpuContainer("pytorch")))
	names := []string{"train-master-0", "train-worker-0", "train-worker-1", "train-worker-2"}
	e.eventually("the PyTorchJob waits as a gang of 4 for 3 free GPUs", time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(created.GetUID()))
		return err == nil && r.Gang == 4 && r.Reason == "InsufficientCapacity" && r.TypeName == "PyTorchJob" &&
			len(e.kindPods(ns, "training.kubeflow.org/job-name=train")) == 4
	})
	if n := e.podsBound(ns, names...); n != 0 {
		t.Fatalf("%d of the PyTorchJob's pods were placed without the rest", n)
	}
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, "bare", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("the PyTorchJob starts whole", time.Minute, func() bool { return e.podsBound(ns, names...) == 4 })
	r := e.record(string(created.GetUID()))
	if r.Kind != "PyTorchJob" || r.PriorityName != "low" || r.Preemptibility != "preemptible" {
		t.Errorf("PyTorchJob record = %s %s %s, want the Train category's low/preemptible", r.Kind, r.PriorityName, r.Preemptibility)
	}
	e.eventually("the bare pod's record is finished", 10*time.Second, func() bool {
		br, err := e.store.WorkloadRecord(e.ctx, string(bare.UID))
		return err == nil && br.Kind == "Pod" && br.FinishedAt != nil
	})

	// A Deployment: its pods (owned through a ReplicaSet) are one workload of type Deployment.
	dep := objects.Deployment("serve", ns).Replicas(2).CPU("1").SchedulerName(e.sched).Obj()
	d, err := e.client.AppsV1().Deployments(ns).Create(e.ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eventually("the Deployment is one workload with two running pods", time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(d.UID))
		return err == nil && r.Kind == "Deployment" && r.TypeName == "Deployment" && r.Phase == "Running" && len(r.Nodes) >= 1 && r.Gang == 2
	})
}
