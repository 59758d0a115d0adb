package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/store"
)

// The kinds' tests run each kind with its real controller, which the shared cluster runs (see
// sharedCluster): the pods are the controller's, made from the templates the test writes, each
// naming the test's scheduler and asking for one GPU.

var (
	jobSetGVR       = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	lwsGVR          = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
	pyTorchJobGVR   = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	mpiJobGVR       = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}
	rayClusterGVR   = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	rayJobGVR       = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	trainJobGVR     = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	trainRuntimeGVR = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainingruntimes"}
)

// gpuContainer is a container spec asking for one GPU, in YAML flow style.
func gpuContainer(name string) string {
	return fmt.Sprintf(`{name: %s, image: example.invalid/%s:1, resources: {limits: {nvidia.com/gpu: 1}}}`, name, name)
}

// dynamicClient talks to the shared cluster about any kind.
func (e *env) dynamicClient() dynamic.Interface {
	e.t.Helper()
	dyn, err := dynamic.NewForConfig(sharedCluster(e.t).RESTConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	return dyn
}

// create makes the object of manifest (YAML) in namespace ns, with labels added to its own.
func (e *env) create(gvr schema.GroupVersionResource, ns, manifest string, labels ...map[string]string) *unstructured.Unstructured {
	e.t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		e.t.Fatalf("manifest of %s: %v", gvr.Resource, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	all := u.GetLabels()
	for _, l := range labels {
		for k, v := range l {
			if all == nil {
				all = map[string]string{}
			}
			all[k] = v
		}
	}
	u.SetLabels(all)
	u, err := e.dynamicClient().Resource(gvr).Namespace(ns).Create(e.ctx, u, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("creating %s: %v", gvr.Resource, err)
	}
	return u
}

// kindCase is a kind run by its controller: a manifest of a gang of three one-GPU pods.
type kindCase struct {
	kind string
	gvr  schema.GroupVersionResource
	// manifest is the top owner named name whose pod templates name scheduler.
	manifest func(name, scheduler string) string
	// before makes what the top owner needs in its namespace first (a Trainer runtime).
	before func(e *env, ns string)
	// pods selects the top owner's pods (the controller's labels).
	pods func(name string) string
	// suspendSwitch is the path of the kind's suspend switch; nil: the kind has none and is
	// preempted by evicting its pods.
	suspendSwitch []string
}

// kindPods lists the live pods of a kind's workload.
func (e *env) kindPods(ns, selector string) []corev1.Pod {
	e.t.Helper()
	list, err := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live = append(live, p)
		}
	}
	return live
}

// scheduledReason is a pod's PodScheduled=False reason, if it has one.
func scheduledReason(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason
		}
	}
	return ""
}

func boundCount(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// testKindWithItsController runs a kind through a gang's life on one node of 3 GPUs:
//
//   - the gang of 3 waits, none of its pods bound, while a filler holds one GPU, and its
//     console page shows its kind, its pods and why it waits;
//   - a priority set through the API lands on the top owner's label and puts it ahead of a
//     Job that was ahead of it in its project's queue;
//   - it starts whole once the filler goes;
//   - urgent work of its project preempts it whole (suspended through the kind's switch in a
//     suspend-mode project, else its pods evicted), and it comes back through its controller,
//     whole, once the urgent work is done.
func testKindWithItsController(t *testing.T, kc kindCase) {
	e := newEnv(t, 1, 3)
	other := e.project("other", 1, store.PolicyUpdate{})
	policy := store.PolicyUpdate{}
	if kc.suspendSwitch != nil {
		policy.PreemptionMode = opt("suspend")
	}
	ns := e.project("team", 3, policy)
	e.job(jobSpec{name: "filler", namespace: other, labels: labels("very-high", "non-preemptible")})
	e.eventually("the filler holds one of the 3 GPUs", time.Minute, func() bool { return e.running(other, "filler") == 1 })

	if kc.before != nil {
		kc.before(e, ns)
	}
	name := "gang"
	// Preemptible whatever its type's default, so that urgent work of its project may take
	// its place.
	owner := e.create(kc.gvr, ns, kc.manifest(name, e.sched), labels("very-low", "preemptible"))
	uid := string(owner.GetUID())
	owners := e.dynamicClient().Resource(kc.gvr).Namespace(ns)
	selector := kc.pods(name)

	t.Log("(a) the gang waits whole for room")
	e.eventually(kc.kind+" waits as a gang of 3 for the 2 free GPUs", time.Minute, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, uid)
		return err == nil && r.Kind == kc.kind && r.Gang == 3 && r.Reason == "InsufficientCapacity" && len(e.kindPods(ns, selector)) == 3
	})
	for _, p := range e.kindPods(ns, selector) {
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s of the %s was bound without the rest", p.Name, kc.kind)
		}
	}
	e.eventually("each of the "+kc.kind+"'s pods says it waits for capacity", 30*time.Second, func() bool {
		for _, p := range e.kindPods(ns, selector) {
			if scheduledReason(p) != "InsufficientCapacity" {
				return false
			}
		}
		return true
	})

	t.Log("(d) the console's workload page shows the kind, its pods and its reason")
	var podNames []string
	for _, p := range e.kindPods(ns, selector) {
		podNames = append(podNames, p.Name)
	}
	e.checkWorkloadPage(uid, append([]string{kc.kind, "InsufficientCapacity"}, podNames...))

	t.Log("(b) a priority set through the API reaches the top owner and reorders the queue")
	ahead := e.job(jobSpec{name: "ahead", namespace: ns, pods: 3, labels: labels("low", "preemptible")})
	positions := func() (gang, job int) {
		g, err1 := e.store.WorkloadRecord(e.ctx, uid)
		j, err2 := e.store.WorkloadRecord(e.ctx, string(ahead.UID))
		if err1 != nil || err2 != nil {
			return 0, 0
		}
		return g.QueuePosition, j.QueuePosition
	}
	e.eventually("a low Job queues ahead of the very-low "+kc.kind, 30*time.Second, func() bool {
		g, j := positions()
		return j > 0 && g > j
	})
	if status, body := e.a.do(t, "PATCH", "/api/v1/workloads/"+uid, `{"priority":"high"}`); status != 200 {
		t.Fatalf("PATCH priority high = %d %v", status, body)
	}
	got, err := owners.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := got.GetLabels()["priorityClassName"]; l != "high" {
		t.Errorf("the %s's priorityClassName label is %q after the change, want high", kc.kind, l)
	}
	e.eventually("the high "+kc.kind+" queues ahead of the low Job", 30*time.Second, func() bool {
		g, j := positions()
		return g > 0 && j > g && e.record(uid).PriorityName == "high"
	})

	t.Log("(a) with room for the gang it starts whole, ahead of the Job")
	if err := e.client.BatchV1().Jobs(other).Delete(e.ctx, "filler", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	e.eventually(kc.kind+"'s 3 pods are bound", time.Minute, func() bool { return boundCount(e.kindPods(ns, selector)) == 3 })
	if n := e.running(ns, "ahead"); n != 0 {
		t.Errorf("%d pods of the lower Job run", n)
	}
	if err := e.client.BatchV1().Jobs(ns).Delete(e.ctx, "ahead", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	firstPods := map[string]bool{}
	for _, p := range e.kindPods(ns, selector) {
		firstPods[string(p.UID)] = true
	}

	t.Log("(c) urgent work preempts it whole; it comes back through its controller")
	e.job(jobSpec{name: "urgent", namespace: ns, runSeconds: "8", labels: labels("very-high", "non-preemptible")})
	switchOn := func() bool {
		u, err := owners.Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		on, _, _ := unstructured.NestedBool(u.Object, kc.suspendSwitch...)
		return on
	}
	e.eventually("the urgent Job runs", time.Minute, func() bool { return e.running(ns, "urgent") == 1 })
	if kc.suspendSwitch != nil && !switchOn() {
		t.Errorf("the urgent Job runs and the %s's %s is not set", kc.kind, strings.Join(kc.suspendSwitch, "."))
	}
	// Whole: the urgent Job needed one GPU, yet none of the gang's first pods stays bound.
	e.eventually("none of the "+kc.kind+"'s first pods is left", time.Minute, func() bool {
		for _, p := range e.kindPods(ns, selector) {
			if firstPods[string(p.UID)] {
				return false
			}
		}
		return true
	})
	for _, p := range e.kindPods(ns, selector) {
		if p.Spec.NodeName != "" {
			t.Errorf("pod %s of the %s (made %s) is bound while the urgent Job runs: the gang was not kept whole",
				p.Name, kc.kind, p.CreationTimestamp.Format(time.RFC3339))
		}
	}
	e.eventually(kc.kind+" comes back whole once the urgent Job is done", 2*time.Minute, func() bool {
		pods := e.kindPods(ns, selector)
		return len(pods) == 3 && boundCount(pods) == 3 && (kc.suspendSwitch == nil || !switchOn())
	})
	e.eventually("the "+kc.kind+"'s history records its preemption (and resume)", 10*time.Second, func() bool {
		h := e.history(uid)
		return slices.Contains(h, "Preempted") && (kc.suspendSwitch == nil || slices.Contains(h, "Resumed"))
	})
}

// checkWorkloadPage opens a workload's page in a real browser as the admin and waits until
// it shows every one of want.
func (e *env) checkWorkloadPage(uid string, want []string) {
	e.t.Helper()
	ctx := newBrowser(e.t)
	loginAsAdmin(e.t, ctx, e.a)
	if err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+"/workloads/"+uid), chromedp.WaitVisible(`#story-pods`)); err != nil {
		e.t.Fatalf("open the workload's page: %v", err)
	}
	var text, missing string
	e.eventually("the workload's page shows "+strings.Join(want, ", "), 30*time.Second, func() bool {
		readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		text, err = chromedp.Run(readCtx, chromedp.Text(`#workload-live`))
		if err != nil {
			return false
		}
		missing = ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				return false
			}
		}
		return true
	})
	screenshot(e.t, ctx, "workload-kind-"+strings.ToLower(want[0]))
	if missing != "" {
		e.t.Errorf("the page lacks %q: %s", missing, text)
	}
}

func ptr[T any](v T) *T { return &v }
