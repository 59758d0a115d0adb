package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/arbiterhq/arbiter/server"
	"github.com/arbiterhq/arbiter/store"
)

// TestKAIExampleManifestsRunUnchanged plays KAI Scheduler's own priority example
// (testdata/kai, byte for byte as KAI publishes it) on Arbiter started with
// --scheduler-name kai-scheduler: the pods name their queue with kai.scheduler/queue and their
// priority with KAI's class names. A queue of one GPU: train-pod runs first, at train (read
// as low, preemptible, S7/S8); build-pod comes next, at build (read as high, non-preemptible),
// and preempts it (S16), as KAI's README tells. Neither name is reported as unknown, and the
// workload's history (API and console) says which class its priority was read from. A pod naming an alias in
// spec.priorityClassName is admitted by Kubernetes, as the alias exists as a PriorityClass (S1).
func TestKAIExampleManifestsRunUnchanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, 8, func(c *server.Config) { c.SchedulerName = "kai-scheduler" })
	ns := e.kaiQueue("default-queue", 1)

	train := e.applyManifest(ns, "testdata/kai/train-priority-pod.yaml")
	e.eventually("train-pod runs", time.Minute, func() bool { return e.podsBound(ns, "train-pod") == 1 })
	e.eventually("train-pod is recorded at low, preemptible", 10*time.Second, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(train.UID))
		return err == nil && r.PriorityName == "low" && r.Preemptibility == "preemptible"
	})

	build := e.applyManifest(ns, "testdata/kai/build-priority-pod.yaml")
	e.eventually("build-pod preempts train-pod and runs", time.Minute, func() bool {
		return e.podsBound(ns, "build-pod") == 1 && strings.Contains(strings.Join(e.history(string(train.UID)), ","), "Preempted")
	})
	if r := e.record(string(build.UID)); r.PriorityName != "high" || r.Preemptibility != "non-preemptible" {
		t.Errorf("build-pod recorded at %s, %s; want high, non-preemptible", r.PriorityName, r.Preemptibility)
	}
	for _, name := range []string{"train-pod", "build-pod"} {
		if evs := e.events(ns, name); hasEvent(evs, "InvalidPriority") {
			t.Errorf("%s's KAI priority class was reported unknown: %s", name, fmtEvents(evs))
		}
	}

	// The API's history of build-pod says where its priority came from.
	status, body := e.a.do(t, "GET", "/api/v1/workloads/"+string(build.UID)+"/events", "")
	history, _ := json.Marshal(body)
	if want := "at priority high, read from its priority class build (KAI's and Run:ai's name)"; status != 200 || !strings.Contains(string(history), want) {
		t.Errorf("GET the events of build-pod = %d %s, want a Queued event saying %q", status, history, want)
	}

	// So does its page in the console, in its timeline.
	ctx := newBrowser(t)
	loginAsAdmin(t, ctx, e.a)
	if err := chromedp.Do(ctx, chromedp.Navigate(e.a.URL+"/workloads/"+string(build.UID)), chromedp.WaitVisible(`#timeline li.event-Queued`)); err != nil {
		t.Fatalf("open build-pod's page: %v", err)
	}
	queued, err := chromedp.Run(ctx, chromedp.Text(`#timeline li.event-Queued`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "read from its priority class build"; !strings.Contains(strings.Join(strings.Fields(queued), " "), want) {
		t.Errorf("build-pod's page says it was queued with %q, want it to contain %q", queued, want)
	}

	// spec.priorityClassName naming an alias: Kubernetes admits the pod (the class exists) and
	// Arbiter reads it as very-high, non-preemptible; the queue's one GPU is build-pod's, so it
	// waits.
	serve := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: ns, Labels: map[string]string{"kai.scheduler/queue": "default-queue"}},
		Spec: corev1.PodSpec{SchedulerName: "kai-scheduler", PriorityClassName: "inference",
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/x:1", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
	}
	var created *corev1.Pod
	created, err = e.client.CoreV1().Pods(ns).Create(e.ctx, serve, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a pod whose spec.priorityClassName is inference was refused: %v", err)
	}
	e.eventually("serve is recorded at very-high, non-preemptible", 30*time.Second, func() bool {
		r, err := e.store.WorkloadRecord(e.ctx, string(created.UID))
		return err == nil && r.PriorityName == "very-high" && r.Preemptibility == "non-preemptible"
	})
}

// kaiQueue makes the project a KAI manifest's kai.scheduler/queue label names, with a
// namespace of its own and a deserved quota (and limit) of gpus in the test's pool, and
// returns the namespace.
func (e *env) kaiQueue(name string, gpus int) string {
	e.t.Helper()
	ns := "kai-" + e.id
	if _, err := e.client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	_, err := e.store.CreateProject(e.ctx, store.ProjectUpdate{
		Name: opt(name), DepartmentID: opt(e.dept.ID), Namespaces: opt([]string{ns}), NodePools: opt([]uuid.UUID{e.pool.ID}),
		Resources: opt([]store.QuotaInput{{NodePoolID: &e.pool.ID, Deserved: gpus, Limit: &gpus}}),
	}, admin)
	if err != nil {
		e.t.Fatal(err)
	}
	return ns
}

// applyManifest creates the pod of a manifest file as it is, in namespace ns.
func (e *env) applyManifest(ns, path string) *corev1.Pod {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		e.t.Fatal(err)
	}
	var p corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	created, err := e.client.CoreV1().Pods(ns).Create(e.ctx, &p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	return created
}
